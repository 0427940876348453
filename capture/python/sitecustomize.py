# SPDX-License-Identifier: MIT
# capture/python/sitecustomize.py - the neuron-explorer framework hook.
#
# `neuron-explorer capture` puts this folder first on PYTHONPATH.  Python
# imports it at start-up; it chains any other sitecustomize on the path, then
# waits for `import torch` and runs torch.profiler over the configured window
# of optimizer steps (NX_WAIT_STEPS, NX_WARMUP_STEPS, NX_ACTIVE_STEPS), with
# Optimizer.step() as the step boundary.  The trace is exported into
# $NX_FRAMEWORK_DIR at the end of the window or at exit (normal exit, an
# uncaught exception, SIGTERM), with a report in hook.json (trace-PID.json
# and hook-PID.json for Python processes the first one starts).  Any failure
# of the hook is recorded in its report and never breaks the workload.
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _chain_sitecustomize():
    """Run the next sitecustomize on sys.path (the one we shadow)."""
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path
            if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


try:
    _chain_sitecustomize()
except Exception as e:  # their sitecustomize failed: report like Python does
    sys.stderr.write("Error in sitecustomize (chained by neuron-explorer): %r\n" % (e,))


class _Hook:
    def __init__(self, outdir, suffix=""):
        import time
        self.suffix = suffix
        self.time = time
        self.outdir = outdir
        self.prof = None
        self.steps = 0
        self.step_clock = []
        self.exported = False
        self.status = "running"
        self.errors = []
        self.exception = None
        self.trace_format = None
        self.clock = {"hook_start": self._clock()}
        env = os.environ.get
        self.wait = self._int(env("NX_WAIT_STEPS"), 0)
        self.warmup = self._int(env("NX_WARMUP_STEPS"), 1)
        self.active = self._int(env("NX_ACTIVE_STEPS"), 3)
        self.shapes = env("NX_TORCH_RECORD_SHAPES", "0") == "1"
        self.stack = env("NX_TORCH_WITH_STACK", "0") == "1"
        self.memory = env("NX_TORCH_PROFILE_MEMORY", "0") == "1"
        self.activities = (env("NX_TORCH_ACTIVITIES") or "cpu").split(",")

    @staticmethod
    def _int(v, default):
        try:
            return max(0, int(v))
        except (TypeError, ValueError):
            return default

    def _clock(self):
        return {"realtime_ns": self.time.time_ns(),
                "monotonic_ns": self.time.monotonic_ns()}

    def error(self, what, e):
        self.errors.append("%s: %s: %s" % (what, type(e).__name__, e))
        self.report()

    # -- set-up, once torch is imported --
    def start(self, torch):
        self.torch = torch
        from torch.profiler import profile, ProfilerActivity, schedule
        acts = [ProfilerActivity.CPU]
        if "cuda" in self.activities and torch.cuda.is_available():
            acts.append(ProfilerActivity.CUDA)
        kw = dict(activities=acts, record_shapes=self.shapes,
                  with_stack=self.stack, profile_memory=self.memory)
        if self.active > 0:
            kw["schedule"] = schedule(wait=self.wait, warmup=self.warmup,
                                      active=self.active, repeat=1)
        else:                          # record from the window start to exit
            from torch.profiler import ProfilerAction
            w, u = self.wait, self.warmup

            def until_exit(step):
                if step < w:
                    return ProfilerAction.NONE
                if step < w + u:
                    return ProfilerAction.WARMUP
                return ProfilerAction.RECORD
            kw["schedule"] = until_exit
        kw["on_trace_ready"] = self.on_ready
        self.prof = profile(**kw)
        self.clock["profiler_start"] = self._clock()
        self.prof.__enter__()
        self.hook_optimizer(torch)
        self.report()

    def hook_optimizer(self, torch):
        import importlib
        optmod = importlib.import_module("torch.optim.optimizer")
        opt = optmod.Optimizer
        reg = getattr(optmod, "register_optimizer_step_post_hook", None)
        if reg is not None:            # torch >= 2.0: a global post-step hook
            reg(lambda *a, **k: self.on_step())
            return
        # torch 1.x: wrap each optimizer class's step() on first construction.
        orig_init = opt.__init__
        hook = self

        def init(self_, *a, **k):
            orig_init(self_, *a, **k)
            cls = type(self_)
            if not getattr(cls.step, "_nx_wrapped", False):
                inner = cls.step

                def step(s, *sa, **sk):
                    r = inner(s, *sa, **sk)
                    hook.on_step()
                    return r
                step._nx_wrapped = True
                step.__wrapped__ = inner
                cls.step = step
        opt.__init__ = init

    # -- step boundary --
    def on_step(self):
        try:
            self.steps += 1
            if len(self.step_clock) < 10000:
                c = self._clock()
                c["step"] = self.steps
                self.step_clock.append(c)
            if self.prof is not None and not self.exported:
                self.prof.step()
            # Progress for the capture agent: every step of the window, then
            # every 100th (the report grows with the step clock).
            if self.steps <= self.wait + self.warmup + self.active + 1 or \
                    self.steps % 100 == 0:
                self.report()
        except Exception as e:
            self.error("step", e)

    def on_ready(self, prof):
        self.export(prof)

    def export(self, prof):
        if self.exported:
            return
        self.exported = True
        path = os.path.join(self.outdir, "trace%s.json" % self.suffix)
        tmp = path + ".tmp"
        try:
            self.clock["export"] = self._clock()
            prof.export_chrome_trace(tmp)
            os.replace(tmp, path)
            self.trace_format = self.sniff(path)
        except Exception as e:
            self.error("export", e)
        self.report()

    def sniff(self, path):
        with open(path, "rb") as f:
            head = f.read(4096).lstrip()
        if head.startswith(b"["):
            return "legacy"
        try:
            import json
            with open(path) as f:
                j = json.load(f)
            base = j.get("baseTimeNanoseconds")
            if base is not None:
                self.clock["trace_base_ns"] = int(base)
        except Exception:
            pass
        return "kineto"

    # -- end of the process --
    def finish(self, status):
        if self.status == "running":
            self.status = status
        try:
            if self.prof is not None and not self.exported:
                self.prof.__exit__(None, None, None)
                if not self.exported:      # no schedule, or a partial window
                    self.export(self.prof)
        except Exception as e:
            self.error("stop", e)
        self.report()

    def report(self):
        try:
            import json
            rep = {"status": self.status, "steps": self.steps,
                   "window": {"wait": self.wait, "warmup": self.warmup,
                              "active": self.active},
                   "exported": self.exported, "trace_format": self.trace_format,
                   "clock": self.clock, "step_clock": self.step_clock,
                   "errors": self.errors, "exception": self.exception,
                   "pid": os.getpid(),
                   "torch_version": getattr(getattr(self, "torch", None),
                                            "__version__", None)}
            path = os.path.join(self.outdir, "hook%s.json" % self.suffix)
            with open(path + ".tmp", "w") as f:
                json.dump(rep, f)
            os.replace(path + ".tmp", path)
        except Exception:
            pass


def _install():
    outdir = os.environ.get("NX_FRAMEWORK_DIR")
    if not outdir or os.environ.get("NX_FRAMEWORK_PROFILER", "torch") != "torch":
        return
    # The first Python process writes trace.json and hook.json; Python
    # processes it starts (torchrun workers, subprocesses) write
    # trace-PID.json and hook-PID.json.
    first = os.environ.get("NX_HOOK_PID")
    suffix = "" if first in (None, str(os.getpid())) else "-%d" % os.getpid()
    if first is None:
        os.environ["NX_HOOK_PID"] = str(os.getpid())
    os.makedirs(outdir, exist_ok=True)
    hook = _Hook(outdir, suffix)
    hook.report()

    import atexit
    atexit.register(hook.finish, "exit")

    prev_excepthook = sys.excepthook

    def excepthook(t, v, tb):
        hook.status = "exception"
        hook.exception = "%s: %s" % (t.__name__, v)
        hook.finish("exception")
        prev_excepthook(t, v, tb)
    sys.excepthook = excepthook

    try:
        import signal
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            def on_term(sig, frame):
                hook.finish("signal")
                signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)
            signal.signal(signal.SIGTERM, on_term)
    except Exception as e:
        hook.error("signal", e)

    def on_torch(torch):
        try:
            hook.start(torch)
        except Exception as e:
            hook.error("start", e)

    if "torch" in sys.modules:
        on_torch(sys.modules["torch"])
        return

    # Wait for `import torch`: wrap the loader of the torch package.
    import importlib.abc
    import importlib.machinery

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name != "torch":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            loader = spec.loader
            orig_exec = loader.exec_module

            def exec_module(module):
                orig_exec(module)
                on_torch(module)
            loader.exec_module = exec_module
            return spec
    sys.meta_path.insert(0, Finder())


try:
    _install()
except Exception as e:
    sys.stderr.write("neuron-explorer: torch hook disabled: %r\n" % (e,))
