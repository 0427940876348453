// SPDX-License-Identifier: MIT
// tests/cuda/multistream.cu - a small multi-stream CUDA program for the CUPTI
// collector: memcpy/memset, kernels on two streams, and a cross-stream event
// wait (stream 2 waits for an event recorded on stream 1).
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void scale(float *a, int n, float k)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		for (int r = 0; r < 200; r++)
			a[i] = a[i] * k + 1.0f;
}

__global__ void add(float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] += b[i];
}

int main(void)
{
	const int n = 1 << 20;
	float *h, *a, *b;
	cudaStream_t s1, s2;
	cudaEvent_t ev;

	CK(cudaMallocHost(&h, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		h[i] = 1.0f;
	CK(cudaMalloc(&a, n * sizeof(float)));
	CK(cudaMalloc(&b, n * sizeof(float)));
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	for (int it = 0; it < 3; it++) {
		CK(cudaMemcpyAsync(a, h, n * sizeof(float), cudaMemcpyHostToDevice, s1));
		CK(cudaMemsetAsync(b, 0, n * sizeof(float), s2));
		scale<<<(n + 255) / 256, 256, 0, s1>>>(a, n, 0.5f);
		CK(cudaEventRecord(ev, s1));
		CK(cudaStreamWaitEvent(s2, ev, 0));
		add<<<(n + 255) / 256, 256, 0, s2>>>(b, a, n);
		CK(cudaMemcpyAsync(h, b, n * sizeof(float), cudaMemcpyDeviceToHost, s2));
	}
	CK(cudaStreamSynchronize(s2));
	CK(cudaDeviceSynchronize());
	printf("h[0] = %f\n", h[0]);
	return 0;
}
