"""The processes an end-to-end run measures against: a real Kafka broker, the Doris
emulator and the cdc2doris daemon."""
import glob
import json
import os
import random
import re
import subprocess
import threading
import time

from .proc import BIN, CLK_TCK, KAFKA_LIB, ROOT, free_port, http, pid_cpu_s, pid_stat, run, spawn, stat_file, status_file, stop
from .stats import parse_metrics

EXTRA_KAFKA_PROPERTIES = ""  # --kafka-property lines for the daemon's kafka.properties


class Broker:
    """A real Kafka 4.x broker (KRaft, combined roles) from the jars scripts/setup fetched,
    with the same properties as tools/fixtures/kafka_broker.cpp."""

    def __init__(self, workdir):
        jars = glob.glob(os.path.join(KAFKA_LIB, "kafka-server-*.jar"))
        if not jars:
            raise RuntimeError(f"Kafka jars not found in {KAFKA_LIB} (run scripts/setup)")
        self.version = re.search(r"kafka-server-(.+)\.jar", os.path.basename(jars[0])).group(1)
        self.dir = os.path.join(workdir, "kafka")
        os.makedirs(self.dir)
        self.port, self.cport = free_port(), free_port()
        while self.cport == self.port:
            self.cport = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        props = os.path.join(self.dir, "server.properties")
        with open(props, "w") as f:
            f.write(f"""process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{self.cport}
listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.cport}
advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={self.dir}/logs
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
auto.create.topics.enable=false
num.partitions=1
log.flush.interval.messages=9223372036854775807
""")
        # Unlike the tests' broker (C1 only, 384 MiB) the bench broker gets the
        # full JIT and 1 GiB: it serves ~1.3 GB per consumer pass.
        self.java = ["java", "-Xms256m", "-Xmx1g", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                     "-cp", os.path.join(KAFKA_LIB, "*")]
        cluster_id = "".join(random.choice(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(21)) + "A"
        # One token: an id starting with '-' would be taken for an option.
        run(self.java + ["kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", props], timeout=120)
        self.log = open(os.path.join(self.dir, "broker.log"), "wb")
        self.proc = spawn(self.java + ["kafka.Kafka", props], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("Kafka broker exited; see " + self.log.name)
            r = subprocess.run(["kcat", "-L", "-b", self.bootstrap, "-m", "2"], capture_output=True)
            if r.returncode == 0 and b"1 brokers" in r.stdout:
                return
            time.sleep(0.5)
        raise RuntimeError("Kafka broker did not become ready")

    def close(self):
        stop(self.proc, timeout=60)
        self.log.close()


class Registry:
    """A real schema registry for the Avro variant (issue 34): Apicurio Registry with in-memory storage, the
    jar scripts/setup builds for the tests, started as tests/support/schema_registry.cpp starts it."""

    def __init__(self, workdir):
        jar = os.path.join(os.environ.get("CDC2DORIS_REGISTRY_APP_DIR", os.path.join(ROOT, "tests", "registry",
                                                                                     "target")),
                           "apicurio-registry-runner.jar")
        if not os.path.exists(jar):
            raise RuntimeError(f"Apicurio Registry not found at {jar} (run scripts/setup)")
        self.dir = os.path.join(workdir, "registry")
        os.makedirs(self.dir)
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/apis/ccompat/v7"
        self.log = open(os.path.join(self.dir, "registry.log"), "wb")
        self.proc = spawn(["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           "-Djava.awt.headless=true", f"-Djava.io.tmpdir={self.dir}", "-Dquarkus.http.host=127.0.0.1",
                           f"-Dquarkus.http.port={port}", "-Dquarkus.datasource.jdbc.min-size=1",
                           "-Dquarkus.datasource.jdbc.initial-size=1", "-Dquarkus.datasource.jdbc.max-size=4",
                           "-jar", jar], stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("the schema registry exited; see " + self.log.name)
            try:
                if http("GET", f"http://127.0.0.1:{port}/health/ready", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the schema registry was not ready in time; see " + self.log.name)
            time.sleep(0.25)

    def register(self, subject, schema):
        """The id the registry gives `schema` (Avro JSON) under `subject`."""
        code, text = http("POST", f"{self.url}/subjects/{subject}/versions", json.dumps({"schema": schema}).encode(),
                          {"Content-Type": "application/vnd.schemaregistry.v1+json"}, timeout=30)
        if code != 200:
            raise RuntimeError(f"registering {subject}: {code} {text[:300]}")
        return json.loads(text)["id"]

    def close(self):
        stop(self.proc, timeout=30)
        self.log.close()


class Emulator:
    def __init__(self, workdir, name, count_only=True):
        args = [BIN["emulator"], "--fe-port", "0", "--be-count", "1", "--no-fsync"]
        if count_only:
            args.append("--count-only")
        self.args = args
        self.err = open(os.path.join(workdir, f"emulator-{name}.log"), "wb")
        self.proc = spawn(args, stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("doris-emulator exited before its ready line")
        ready = json.loads(line)
        self.fe = ready["fe"]

    def sql(self, db, stmt):
        body = json.dumps({"stmt": stmt}).encode()
        code, text = http("POST", f"http://{self.fe}/api/query/default_cluster/{db or 'information_schema'}", body,
                          {"Authorization": "Basic cm9vdDo=", "Content-Type": "application/json"})
        j = json.loads(text)
        if code != 200 or j.get("code") != 0:
            raise RuntimeError(f"SQL failed: {stmt}: {text}")

    def stats(self):
        return json.loads(http("GET", f"http://{self.fe}/_emulator/stats")[1])

    def fault(self, spec):
        """Installs a fault (docs/doris-emulator.md, Fault API)."""
        code, text = http("POST", f"http://{self.fe}/_emulator/faults", json.dumps(spec).encode(),
                          {"Content-Type": "application/json"})
        if code != 200:
            raise RuntimeError(f"emulator fault {spec}: {code} {text}")

    def close(self):
        stop(self.proc)
        self.err.close()


def write_daemon_config(path, broker, emu, group, topic_regex, state_dir, label_prefix, epoch_interval, admin,
                        extra_delivery="", kafka_yaml="", kafka_props="", extra_yaml=""):
    """The daemon's YAML; bench-ceiling reads the same file (issue 36)."""
    with open(path, "w") as f:
        f.write(f"""kafka:
  bootstrap_servers: "{broker.bootstrap}"
  group_id: "{group}"
  topic_regex: "{topic_regex}"
{kafka_yaml}  properties:
    auto.offset.reset: earliest
{kafka_props}{EXTRA_KAFKA_PROPERTIES}doris:
  fe: ["{emu.fe}"]
  user: root
  password: ""
{extra_yaml}delivery:
  label_prefix: {label_prefix}
  epoch_interval: {epoch_interval}
{extra_delivery}state:
  dir: {state_dir}
admin:
  listen: {admin}
logging:
  level: info
""")


class Daemon:
    """cdc2doris run, stdout+stderr read by a thread that timestamps the
    'consuming; epoch' line (the end of recovery)."""

    def __init__(self, workdir, name, broker, emu, group, topic_regex, state_dir, label_prefix, epoch_interval,
                 extra_delivery="", kafka_yaml="", kafka_props="", extra_yaml=""):
        self.admin = f"127.0.0.1:{free_port()}"
        self.config = os.path.join(workdir, f"{name}.yaml")
        write_daemon_config(self.config, broker, emu, group, topic_regex, state_dir, label_prefix, epoch_interval,
                            self.admin, extra_delivery, kafka_yaml, kafka_props, extra_yaml)
        self.logpath = os.path.join(workdir, f"{name}.log")
        self.logf = open(self.logpath, "a")
        self.t_consuming = None
        self.t_assigned = None
        self.assigned_times = []  # every "[pipeline] assigned" line (failover)
        self.t0 = time.monotonic()
        self.proc = spawn([BIN["daemon"], "run", "--config", self.config], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if self.t_consuming is None and "consuming; epoch" in line:
                self.t_consuming = time.monotonic()
            if "[pipeline] assigned" in line:
                self.assigned_times.append(time.monotonic())
                if self.t_assigned is None:
                    self.t_assigned = self.assigned_times[-1]
            self.logf.write(line)
        self.logf.flush()

    def metrics(self):
        try:
            code, text = http("GET", f"http://{self.admin}/metrics", timeout=5)
            return parse_metrics(text) if code == 200 else None
        except OSError:
            return None

    def ready(self):
        try:
            return http("GET", f"http://{self.admin}/readyz", timeout=2)[0] == 200
        except OSError:
            return False

    def proc_stats(self):
        """(cpu_s user+sys, VmHWM MiB, VmRSS MiB, threads) from /proc."""
        cpu = pid_cpu_s(self.proc.pid)
        s = status_file(f"/proc/{self.proc.pid}/status")
        def mib(key):
            return s[key] / 1024 if key in s else None
        return cpu, mib("VmHWM"), mib("VmRSS"), s.get("Threads")

    def thread_cpu_s(self):
        """(the pipeline thread's CPU-s, {thread name: CPU-s}) from /proc/PID/task: user+sys per thread, the
        threads of one name summed (the daemon names its threads; the pipeline thread is the main thread).
        Threads that already ended are not in it."""
        main, by_name = None, {}
        base = f"/proc/{self.proc.pid}/task"
        for tid in os.listdir(base):
            try:
                name, fields = stat_file(f"{base}/{tid}/stat")
            except OSError:
                continue  # ended meanwhile
            cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
            by_name[name] = round(by_name.get(name, 0) + cpu, 2)
            if int(tid) == self.proc.pid:
                main = cpu
        return main, by_name

    def pipeline_thread_switches(self):
        """(voluntary, involuntary) context switches of the pipeline (main) thread so far, from
        /proc/PID/task/PID/status: waits it chose (poll, backpressure, a commit) and preemptions."""
        s = status_file(f"/proc/{self.proc.pid}/task/{self.proc.pid}/status")
        return s.get("voluntary_ctxt_switches"), s.get("nonvoluntary_ctxt_switches")

    def minor_faults(self):
        """Minor page faults of the daemon so far (first touches of fresh memory), from /proc."""
        return int(pid_stat(self.proc.pid)[7])

    def close(self, timeout=90):
        rc = stop(self.proc, timeout=timeout)
        self.reader.join(10)
        self.logf.close()
        return rc

