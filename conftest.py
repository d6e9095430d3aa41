"""The suite runs on CPU on every machine: its training tests compare exact fp32 losses and start several
gloo processes under torchrun, which a GPU's bf16 and one card per process would not give (nine failed on a
one-GPU machine).  The GPU paths have their own check, benchmarks/gpu/proof.sh.  ``AGENTENV_TEST_GPU=1``
leaves the GPUs visible."""

import os

if os.environ.get("AGENTENV_TEST_GPU") != "1":
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch first looks for CUDA; inherited by torchrun's workers

# Tests press Ctrl-C (SIGINT to the main thread) and expect KeyboardInterrupt.  A suite started in the
# background of a non-interactive shell inherits SIGINT ignored, and Python then leaves it ignored: put
# Python's own handler back, as a terminal's suite has it.
import signal  # noqa: E402

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
