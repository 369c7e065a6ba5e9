"""Restart and fail-over: restart-to-consuming on a clean state and on 1,000 tables'
state, and a second group member taking over from one SIGKILLed."""
import os
import re
import signal
import time

from . import proc
from .fixtures import Daemon
from .pipeline import section_pipeline
from .proc import log, run, wait_committed_argv
from .stats import fig
from .workload import make_emulator, produce, produce_argv


def restart_once(env, info, name, state, emu, group, label_prefix):
    d = Daemon(proc.TMP, name, env.broker, emu, group, info["topic_regex"], state, label_prefix, env.cfg.epoch_interval)
    t_ready = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if d.proc.poll() is not None:
            raise RuntimeError(f"daemon exited {d.proc.returncode}; see {d.logpath}")
        if t_ready is None and d.ready():
            t_ready = time.monotonic()
        if d.t_consuming is not None and t_ready is not None:
            break
        time.sleep(0.01)
    res = {"to_consuming_log_s": (d.t_consuming - d.t0) if d.t_consuming else None,
           "to_readyz_200_s": (t_ready - d.t0) if t_ready else None}
    cpu, hwm, _, _ = d.proc_stats()
    res["cpu_s"] = cpu
    res["peak_rss_mib"] = hwm
    with open(d.logpath) as f:
        text = f.read()
    m = re.findall(r"(aborted \d+ lingering[^\n]*|lingering[^\n]*)", text)
    res["lingering_log"] = m[-3:]
    res["exit_code"] = d.close()
    return res


def section_recovery(env):
    cfg = env.cfg
    out = {"clean": [], "tables_1k": []}
    info8 = env.produced.get("e2e8") or produce(env, "rec8", 1000, 8, 0)
    for rep in range(1, cfg.reps + 1):
        emu = make_emulator(f"rec-clean-{rep}", 8)
        res = restart_once(env, info8, f"daemon-rec-clean-{rep}", os.path.join(proc.TMP, f"state-rec-clean-{rep}"),
                           emu, f"rec-clean-{rep}", f"recclean{rep}")
        emu.close()
        out["clean"].append(res)
        log(f"recovery clean rep {rep}: {res}")
    if env.state_1k is None:
        section_pipeline(env, "e2e1k", cfg.records_1k, 1000, 8, with_baselines=False)
    info = env.info_1k
    last_rep = cfg.reps
    for rep in range(1, cfg.reps + 1):
        res = restart_once(env, info, f"daemon-rec-1k-{rep}", env.state_1k, env.emu_1k,
                           f"e2e1k-cdc2doris-{last_rep}", f"e2e1kr{last_rep}")
        out["tables_1k"].append(res)
        log(f"recovery 1k rep {rep}: {res}")
    keys = ("to_consuming_log_s", "to_readyz_200_s", "cpu_s", "peak_rss_mib")
    out["figures"] = {"clean": fig(out["clean"], keys), "tables_1k": fig(out["tables_1k"], keys)}
    return out


def section_failover(env):
    """Fail-over (issue 16): two members of one group, the second SIGKILLed once
    both consume; from the kill until the survivor is assigned the dead
    member's partitions, and until the group committed a batch produced right
    after the kill (the dead member's partitions included)."""
    cfg = env.cfg
    out = {"runs": [], "session_timeout_ms": 2000}
    records = 2000 if cfg.quick else 20000
    info = produce(env, "fo", records, 8, 0)
    props = '    session.timeout.ms: "2000"\n    heartbeat.interval.ms: "300"\n'
    for rep in range(1, cfg.reps + 1):
        emu = make_emulator(f"fo-{rep}", 8)
        group = f"fo-{rep}"
        ds = {}
        try:
            for n in ("a", "b"):
                ds[n] = Daemon(proc.TMP, f"daemon-fo-{rep}-{n}", env.broker, emu, group, info["topic_regex"],
                               os.path.join(proc.TMP, f"state-fo-{rep}-{n}"), f"fo{rep}{n}", env.cfg.epoch_interval,
                               kafka_yaml=f"  instance_id: fo-{rep}-{n}\n", kafka_props=props)
            deadline = time.monotonic() + 60
            while not ds["b"].assigned_times and time.monotonic() < deadline:
                time.sleep(0.05)
            if not ds["b"].assigned_times:
                raise RuntimeError("the second member was never assigned partitions")
            run(wait_committed_argv(env.broker, group, info["regex"], 600), timeout=700)
            before = len(ds["a"].assigned_times)
            t_kill = time.monotonic()
            os.killpg(ds["b"].proc.pid, signal.SIGKILL)
            # More records right away (the dead member's partitions included),
            # without produce()'s group warm-up, which would add seconds here.
            run(produce_argv(env.broker, "fo", max(records // 10, 500), 8, 0, seed=2024 + rep), timeout=600)
            t_produced = time.monotonic()
            run(wait_committed_argv(env.broker, group, info["regex"], 600), timeout=700)
            t_done = time.monotonic()
            later = ds["a"].assigned_times[before:]
            res = {"to_reassigned_s": (later[0] - t_kill) if later else None, "to_caught_up_s": t_done - t_kill,
                   "produce_after_kill_s": t_produced - t_kill}
        finally:
            for d in ds.values():
                d.close()
            emu.close()
        out["runs"].append(res)
        log(f"failover rep {rep}: {res}")
    out["figures"] = fig(out["runs"], ("to_reassigned_s", "to_caught_up_s", "produce_after_kill_s"))
    return out

