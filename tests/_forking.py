"""A child process forked while another thread holds a lock: how fork safety is tested.

The code runs in a fresh interpreter, so the fork happens with exactly the threads the test
starts. The child is killed by an alarm if it waits on the lock, and its exit code says so.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def child_forked_while_held(setup: str, lock: str, child: str) -> int:
    """The exit code of a child forked while a thread of the parent holds ``lock`` (an
    expression, evaluated after ``setup``) and runs ``child`` (which ends the child with its
    own ``os._exit`` code); -14 (SIGALRM) when the child was still waiting after 20 s."""
    code = "\n".join(
        [
            "import os, signal, threading",
            textwrap.dedent(setup),
            "held, done = threading.Event(), threading.Event()",
            "def hold():",
            f"    with {lock}:",
            "        held.set()",
            "        done.wait()",
            "holder = threading.Thread(target=hold)",
            "holder.start()",
            "held.wait()",
            "child = os.fork()",
            "if child == 0:",
            "    signal.alarm(20)",
            textwrap.indent(textwrap.dedent(child), "    "),
            "    os._exit(0)",
            "done.set()",
            "holder.join()",
            "_, status = os.waitpid(child, 0)",
            "print(os.waitstatus_to_exitcode(status))",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout)
