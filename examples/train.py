# SPDX-License-Identifier: MIT
# examples/train.py - a tiny CPU training run for the capture agent: a small
# conv + linear model on random data for a few optimizer steps.
#   neuron-explorer capture -o run.ntff -- python3 examples/train.py
# Options: --steps N (default 8), --crash-after N (raise after N steps, for
# the tests), --sleep S (seconds per step, for the signal tests).
import argparse
import time

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(4)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = self.pool(x).flatten(1)
        return self.fc(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--crash-after", type=int, default=-1)
    ap.add_argument("--sleep", type=float, default=0.0)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(a.steps):
        if step == a.crash_after:
            raise RuntimeError("crash requested after %d steps" % step)
        x = torch.randn(16, 3, 16, 16)
        y = torch.randint(0, 10, (16,))
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
        if a.sleep:
            time.sleep(a.sleep)


if __name__ == "__main__":
    main()
