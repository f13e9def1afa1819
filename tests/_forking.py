"""A child process forked while another thread holds a lock: how fork safety is tested.

The code runs in a fresh interpreter, so the fork happens with exactly the threads the test
starts. The lock is replaced by one that says when a thread waits on it: the thread holding
it lets it go once the fork waits on it (the package holds its locks over a fork), or after
10 s. A child stuck on the lock is killed by an alarm, and its exit code says so.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

WATCHED = '''
class Watched:
    """A lock that says when a thread waits on it."""

    def __init__(self):
        self.inner, self.waited = threading.Lock(), threading.Event()

    def acquire(self, blocking=True, timeout=-1):
        if self.inner.acquire(False):
            return True
        self.waited.set()
        return self.inner.acquire(blocking, timeout)

    def release(self):
        self.inner.release()

    __enter__ = acquire

    def __exit__(self, *exc):
        self.release()
'''


def child_forked_while_held(setup: str, lock: str, child: str) -> None:
    """Fork while a thread of the parent holds ``lock`` (an assignable expression, replaced
    after ``setup`` by a watched lock), then run ``child`` in the child, which must exit 0:
    -14 (SIGALRM) is a child still waiting on the lock after 20 s."""
    code = "\n".join(
        [
            "import os, signal, threading",
            WATCHED,
            textwrap.dedent(setup),
            f"{lock} = watched = Watched()",
            "held = threading.Event()",
            "def hold():",
            "    with watched.inner:",
            "        held.set()",
            "        watched.waited.wait(10)",
            "holder = threading.Thread(target=hold)",
            "holder.start()",
            "held.wait()",
            "child = os.fork()",
            "if child == 0:",
            "    signal.alarm(20)",
            textwrap.indent(textwrap.dedent(child), "    "),
            "    os._exit(0)",
            "holder.join()",
            "_, status = os.waitpid(child, 0)",
            "print(os.waitstatus_to_exitcode(status))",
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    exit_code = int(result.stdout)
    assert exit_code == 0, (
        f"the child exited with {exit_code} (-14: stuck on the lock)\n{result.stderr[-2000:]}"
    )
