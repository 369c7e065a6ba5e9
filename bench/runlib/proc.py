"""Paths of the bench binaries and the processes bench/run starts: every child runs in its
own process group and is stopped at the end, also on Ctrl-C."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build", "bench")
BIN = {
    "daemon": os.path.join(BUILD, "daemon", "cdc2doris"),
    "emulator": os.path.join(BUILD, "tools", "doris_emulator", "doris-emulator"),
    "workload": os.path.join(BUILD, "tools", "workload", "cdc2doris-workload"),
    "decode": os.path.join(BUILD, "bench", "decode", "bench-decode"),
    "doris": os.path.join(BUILD, "bench", "doris", "bench-doris-load"),
    "emu_ingest": os.path.join(BUILD, "bench", "emulator", "bench_emulator_ingest"),
    "kafka": os.path.join(BUILD, "bench", "pipeline", "bench-kafka"),
    "ceiling": os.path.join(BUILD, "bench", "pipeline", "bench-ceiling"),
}
TARGETS = ["cdc2doris", "doris-emulator", "cdc2doris-workload", "bench-decode", "bench-doris-load",
           "bench_emulator_ingest", "bench-kafka", "bench-ceiling"]
KAFKA_LIB = os.environ.get("CDC2DORIS_KAFKA_LIB_DIR", os.path.join(ROOT, "tests", "kafka", "target", "dependency"))

CHILDREN = []  # Popen objects started here (each in its own process group)
# The run's scratch directory; main() sets it, cleanup() removes it.
TMP = None


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def spawn(argv, **kw):
    p = subprocess.Popen(argv, start_new_session=True, **kw)
    CHILDREN.append(p)
    return p


def _kill_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass


def stop(p, timeout=30, sig=signal.SIGTERM):
    if p is None:
        return None
    if p.poll() is None:
        _kill_group(p, sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill_group(p, signal.SIGKILL)
            p.wait()
    if p in CHILDREN:
        CHILDREN.remove(p)
    return p.returncode


def cleanup():
    for p in list(CHILDREN):
        if p.poll() is None:
            _kill_group(p, signal.SIGKILL)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
    CHILDREN.clear()
    if TMP and os.path.isdir(TMP) and not os.environ.get("BENCH_KEEP_TMP"):
        shutil.rmtree(TMP, ignore_errors=True)


def on_signal(signum, _frame):
    log(f"signal {signum}: stopping every process started by the bench")
    cleanup()
    sys.exit(128 + signum)


def run(argv, timeout=None, check=True, **kw):
    p = spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        stop(p)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {err[-3000:]}")
    return out, err


def run_rusage(argv, stdout=subprocess.PIPE, err_path=None):
    """Runs argv to completion; returns (stdout, wall_s, cpu_s user+sys, maxrss_kib).
    err_path: stderr goes to this file (else it is read, and shown on failure)."""
    t0 = time.monotonic()
    errf = open(err_path, "wb") if err_path else None
    p = spawn(argv, stdout=stdout, stderr=errf or subprocess.PIPE)
    out = b""
    if stdout == subprocess.PIPE:
        out = p.stdout.read()
    if errf:
        errf.close()
        err = b"(stderr in " + err_path.encode() + b")"
    else:
        err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    CHILDREN.remove(p)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {err.decode()[-3000:]}")
    return out.decode(), wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def stat_file(path):
    """(command name, the fields after it) of a /proc stat file (index 0 = state, 7 = minflt, 11/12 =
    utime/stime)."""
    with open(path) as f:
        s = f.read()
    return s[s.index("(") + 1:s.rindex(")")], s.rpartition(")")[2].split()


def status_file(path):
    """{field: first number} of a /proc status file (VmHWM in kB, Threads, voluntary_ctxt_switches, ...);
    fields without a leading number are left out."""
    out = {}
    with open(path) as f:
        for line in f:
            key, _, rest = line.partition(":")
            parts = rest.split()
            if parts and parts[0].isdigit():
                out[key] = int(parts[0])
    return out


def pid_stat(pid):
    """The fields of /proc/PID/stat after the command name."""
    return stat_file(f"/proc/{pid}/stat")[1]


def pid_cpu_s(pid):
    """utime+stime of a process (all its threads) in seconds, from /proc."""
    fields = pid_stat(pid)
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_s():
    """(busy CPU-seconds, total CPU-seconds) of the whole machine since boot, from /proc/stat;
    idle and iowait count as not busy."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]
    return (sum(ticks[:8]) - idle) / CLK_TCK, sum(ticks[:8]) / CLK_TCK


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, timeout=10):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def json_line(text, prefix=""):
    for line in reversed(text.splitlines()):
        line = line.strip()
        if prefix and line.startswith(prefix):
            line = line[len(prefix):].strip()
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON line in output: {text[-2000:]}")


def kafka_tool(broker, command, *args):
    """argv of a `bench-kafka COMMAND` against this broker."""
    return [BIN["kafka"], command, "--bootstrap", broker.bootstrap, *args]


def wait_committed_argv(broker, group, regex, timeout_s):
    """bench-kafka wait-committed: exits once GROUP committed the high watermark of every partition of REGEX."""
    return kafka_tool(broker, "wait-committed", "--group", group, "--topic-regex", regex, "--timeout", str(timeout_s))
