#!/usr/bin/python3
"""Replays ported Apache Doris regression cases against doris-emulator (issue 30).

usage: run_cases.py --emulator BIN CASE_DIR...

Each CASE_DIR holds a case.yaml (format: README.md) and the suite's .out file.
The emulator is started once; every case gets a fresh database. Stream loads
are sent as Doris' regression framework sends them
(regression-test/framework/.../action/StreamLoadAction.groovy): a PUT to the FE
with the headers and `Expect: 100-Continue` but no body, then the same request
with the body to the BE named by the 307's Location. Query results are rendered
as the framework writes JDBC results into .out files (JdbcUtils.toStringList,
OutputUtils.toCsvString with CSVFormat.MYSQL, DataUtils.sortByToString).
"""
import argparse
import base64
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
import gzip
from decimal import Decimal
from urllib.parse import urlsplit

import pymysql
import yaml
from pymysql.constants import FIELD_TYPE

USER, PASSWORD = "root", ""


class CaseFailure(Exception):
    pass


# ---------------------------------------------------------------- HTTP client

def _read_response(sock, deadline):
    """Reads one HTTP response: (status, headers dict lower-cased, body bytes)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = _recv(sock, deadline)
        if not chunk:
            raise CaseFailure("connection closed before the response head; got %r" % buf[:200])
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if status == 100:
        return status, headers, rest
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            chunk = _recv(sock, deadline)
            if not chunk:
                break
            rest += chunk
        return status, headers, rest[:n]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += _recv(sock, deadline)
            size_line, rest = rest.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += _recv(sock, deadline)
            body += rest[:size]
            rest = rest[size + 2:]
            if size == 0:
                return status, headers, body
    while True:  # until close
        chunk = _recv(sock, deadline)
        if not chunk:
            return status, headers, rest
        rest += chunk


def _recv(sock, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise CaseFailure("HTTP reply timed out")
    sock.settimeout(left)
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def http_request(hostport, method, path, headers, body=None, chunked=False, timeout=60):
    """One request on a new connection. With a body and `Expect: 100-continue`
    it waits for the interim reply as Apache HttpClient does (3 s, then sends
    anyway); a final reply instead of 100 ends the exchange without the body."""
    host, port = hostport.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % hostport]
        given = {k.lower(): v for k, v in headers.items()}
        for k, v in headers.items():
            lines.append("%s: %s" % (k, v))
        if "transfer-encoding" in given:
            chunked = given["transfer-encoding"].strip().lower() == "chunked"
        elif body is not None and "content-length" not in given and chunked != "none":
            lines.append("Transfer-Encoding: chunked" if chunked else "Content-Length: %d" % len(body))
        else:
            chunked = False
        lines.append("Connection: close")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8"))
        expect = any(k.lower() == "expect" for k in headers)
        if body is not None:
            if expect:
                r, _, _ = select.select([sock], [], [], 3.0)
                if r:
                    status, hdrs, rest = _read_response(sock, deadline)
                    if status != 100:
                        return status, hdrs, rest
            # A server that answers before the body (header-phase error) may
            # close while we send: read its answer anyway, as curl does.
            try:
                if chunked and chunked != "none":
                    step = 64 * 1024
                    for i in range(0, len(body), step):
                        part = body[i:i + step]
                        sock.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
                    sock.sendall(b"0\r\n\r\n")
                else:
                    sock.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
        return _read_response(sock, deadline)
    finally:
        sock.close()


# ------------------------------------------------------------ result rendering

def java_bigdecimal(text):
    """BigDecimal(text).toString(): scientific notation when the adjusted
    exponent is below -6 (e.g. 0.0000000000 -> 0E-10)."""
    d = Decimal(text)
    sign, digits, exp = d.as_tuple()
    unscaled = "".join(map(str, digits)).lstrip("0") or "0"
    scale = -exp
    adjusted = len(unscaled) - 1 - scale
    neg = "-" if sign and unscaled != "0" else ""
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            return neg + unscaled
        s = unscaled.rjust(scale + 1, "0")
        return neg + s[:-scale] + "." + s[-scale:]
    mant = unscaled[0] + ("." + unscaled[1:] if len(unscaled) > 1 else "")
    return neg + mant + "E" + ("+" if adjusted > 0 else "") + str(adjusted)


def java_local_datetime(text):
    """MySQL DATETIME text as Connector/J's LocalDateTime.toString()."""
    m = re.match(r"^(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$", text)
    if not m:
        return text
    date, hh, mi, ss, frac = m.groups()
    out = "%sT%s:%s" % (date, hh, mi)
    nanos = int((frac or "0").ljust(9, "0")[:9])
    if ss != "00" or nanos:
        out += ":" + ss
        if nanos:
            if nanos % 1000000 == 0:
                out += ".%03d" % (nanos // 1000000)
            elif nanos % 1000 == 0:
                out += ".%06d" % (nanos // 1000)
            else:
                out += ".%09d" % nanos
    return out


def render_value(raw, desc):
    """A text-protocol value as the framework's toStringList yields it."""
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        raw = raw.decode("utf-8", "replace")
    t, length = desc[1], desc[3]
    if t in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE, FIELD_TYPE.TIME):
        return raw  # new String(getBytes()): the server's text
    if t == FIELD_TYPE.TINY and length == 1:
        return "true" if int(raw) != 0 else "false"  # tinyInt1isBit: Boolean
    if t in (FIELD_TYPE.TINY, FIELD_TYPE.SHORT, FIELD_TYPE.LONG, FIELD_TYPE.INT24, FIELD_TYPE.LONGLONG):
        return str(int(raw))
    if t in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL):
        return java_bigdecimal(raw)
    if t in (FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP):
        return java_local_datetime(raw)
    return raw


def csv_field(v):
    """commons-csv CSVFormat.MYSQL printing of one value."""
    if v is None:
        return "\\N"
    out = []
    for c in v:
        if c == "\r":
            out.append("\\r")
        elif c == "\n":
            out.append("\\n")
        elif c in ("\t", "\\"):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def sort_rows(rows):
    """DataUtils.sortByToString: column by column, NULL first, String order
    (UTF-16 code units, as Java compares)."""
    import functools

    def cmp(a, b):
        for x, y in zip(a, b):
            if x == y:
                continue
            if x is None:
                return -1
            if y is None:
                return 1
            kx, ky = x.encode("utf-16-be"), y.encode("utf-16-be")
            if kx != ky:
                return -1 if kx < ky else 1
        return 0
    return sorted(rows, key=functools.cmp_to_key(cmp))


def read_out_file(path):
    """The blocks of a .out file in order: [(tag, lines)] (framework's
    OutputBlocksIterator: `-- ` comment lines skipped, last empty line dropped)."""
    blocks = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if line.startswith("-- !") and line.endswith(" --"):
            blocks.append((line[4:-3].strip(), []))
            continue
        if not blocks or line.startswith("-- "):
            continue
        blocks[-1][1].append(line)
    for _, b in blocks:
        if b and b[-1] == "":
            b.pop()
    return blocks


def floats_close(expect_line, real_line, types):
    """Newer OutputUtils.checkOutput compares FLOAT/DOUBLE columns with a
    relative tolerance; everything else must match exactly."""
    e, r = expect_line.split("\t"), real_line.split("\t")
    if len(e) != len(r) or len(e) != len(types):
        return False
    for a, b, t in zip(e, r, types):
        if a == b:
            continue
        if t not in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
            return False
        try:
            fa, fb = float(a), float(b)
        except ValueError:
            return False
        if abs(fa - fb) > 1e-6 * max(abs(fa), abs(fb), 1e-300):
            return False
    return True


# ------------------------------------------------------------------- the runner

class Runner:
    def __init__(self, addrs, case_dir):
        self.fe = addrs["fe"]
        self.query = addrs["query"]
        self.bes = addrs["bes"]
        self.dir = case_dir
        with open(os.path.join(case_dir, "case.yaml"), encoding="utf-8") as f:
            self.case = yaml.safe_load(f)
        self.name = os.path.basename(os.path.normpath(case_dir))
        self.db = "regression_" + re.sub(r"[^A-Za-z0-9_]", "_", self.name)
        outs = sorted(p for p in os.listdir(case_dir) if p.endswith(".out"))
        if len(outs) > 1:
            raise CaseFailure("more than one .out file in %s" % case_dir)
        self.blocks = read_out_file(os.path.join(case_dir, outs[0])) if outs else []
        # out_skip: blocks of suite parts not ported before this case's part.
        self.next_block = int(self.case.get("out_skip", 0))
        self.txns = {}
        self.conn = None

    def connect(self):
        host, port = self.query.rsplit(":", 1)
        # conv={}: every value as the server's text, rendered by render_value.
        return pymysql.connect(host=host, port=int(port), user=USER, password=PASSWORD,
                               conv={}, autocommit=True, charset="utf8mb4")

    def run(self):
        admin = self.connect()
        with admin.cursor() as c:
            c.execute("DROP DATABASE IF EXISTS `%s`" % self.db)
            c.execute("CREATE DATABASE `%s`" % self.db)
        admin.close()
        self.conn = self.connect()
        with self.conn.cursor() as c:
            c.execute("USE `%s`" % self.db)
        for i, step in enumerate(self.case.get("steps") or [], 1):
            try:
                self.step(step)
            except CaseFailure as e:
                raise CaseFailure("step %d %s\n%s" % (i, json.dumps(step, ensure_ascii=False)[:600], e))
        self.conn.close()

    def step(self, s):
        if "sql" in s and not ("qt" in s or "order_qt" in s):
            return self.sql_step(s)
        if "qt" in s or "order_qt" in s:
            return self.query_step(s)
        if "stream_load" in s:
            return self.stream_load(s["stream_load"])
        if "stream_load_2pc" in s:
            return self.stream_load_2pc(s["stream_load_2pc"])
        if "http_get" in s:
            return self.http_get(s["http_get"])
        if "sleep" in s:
            time.sleep(float(s["sleep"]))
            return None
        raise CaseFailure("unknown step kind")

    def sql_step(self, s):
        want_err = s.get("expect_error")
        try:
            with self.conn.cursor() as c:
                c.execute(s["sql"])
                rows = c.fetchall() if c.description else []
                desc = c.description
        except pymysql.MySQLError as e:
            msg = e.args[1] if len(e.args) > 1 else str(e)
            if want_err is not None and want_err in msg:
                return
            raise CaseFailure("SQL failed: %s\nexpected: %s" % (msg, "error containing %r" % want_err
                                                              if want_err is not None else "success"))
        if want_err is not None:
            raise CaseFailure("SQL succeeded, expected an error containing %r" % want_err)
        if "expect_rows" in s:
            got = ["\t".join(csv_field(render_value(v, d)) for v, d in zip(r, desc)) for r in rows]
            want = [str(x) for x in s["expect_rows"]]
            if got != want:
                raise CaseFailure("rows differ\nexpected:\n%s\nactual:\n%s" % ("\n".join(want), "\n".join(got)))

    def query_step(self, s):
        ordered = "order_qt" in s
        tag = s["order_qt"] if ordered else s["qt"]
        # OutputBlocksIterator.hasNextTagBlock: the next block with this tag,
        # blocks before it are skipped (a case may port part of a suite).
        i = self.next_block
        while i < len(self.blocks) and self.blocks[i][0] != tag:
            i += 1
        if i == len(self.blocks):
            raise CaseFailure("no further `-- !%s --` block in the case's .out file" % tag)
        self.next_block = i + 1
        want = self.blocks[i][1]
        if "columns" in s:
            # The suite's query also selected columns the emulator does not model
            # (BITMAP_TO_STRING(__DORIS_SKIP_BITMAP_COL__)); the case selects the
            # others first and only those are compared.
            want = ["\t".join(w.split("\t")[:int(s["columns"])]) for w in want]
        try:
            with self.conn.cursor() as c:
                c.execute(s["sql"])
                desc = c.description or []
                raw = c.fetchall() if desc else []
        except pymysql.MySQLError as e:
            raise CaseFailure("query failed: %s" % (e.args,))
        rows = [[render_value(v, d) for v, d in zip(r, desc)] for r in raw]
        if ordered:
            rows = sort_rows(rows)
        got = ["\t".join(csv_field(v) for v in r) for r in rows]
        types = [d[1] for d in desc]
        ok = len(got) == len(want) and all(a == b or floats_close(a, b, types) for a, b in zip(want, got))
        if not ok:
            raise CaseFailure("tag %s differs\n--- expected\n%s\n--- actual\n%s" %
                              (tag, "\n".join(want), "\n".join(got)))

    def auth(self):
        return "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()

    def body_of(self, sl):
        if "file" in sl:
            with open(os.path.join(self.dir, sl["file"]), "rb") as f:
                data = f.read()
        else:
            data = str(sl.get("body", "")).encode("utf-8")
        return data

    def stream_load(self, sl):
        table = sl.get("table")
        # The framework puts a random label first, then the suite's `set`s;
        # `curl: true` is a suite's own `curl --location-trusted -H ... -T file`
        # (no label, no Expect for a small body).
        curl = bool(sl.get("curl"))
        headers = {} if curl else {"label": str(uuid.uuid4())}
        for k, v in (sl.get("headers") or {}).items():
            headers[str(k)] = "" if v is None else str(v)
        for k in sl.get("unset") or []:
            headers.pop(k, None)
        headers["Authorization"] = self.auth()
        if not curl:
            headers["Expect"] = "100-Continue"
        elif sl.get("chunked"):
            headers["Expect"] = "100-continue"  # curl asks for it on a chunked upload
        for k, v in (sl.get("raw_headers") or {}).items():
            headers[str(k)] = str(v)  # e.g. curl's -H Content-Length:0 -H Transfer-Encoding:chunked
        body = self.body_of(sl)
        db = sl.get("db", self.db)
        path = "/api/%s/%s/_stream_load" % (db, table)
        if sl.get("direct_to_be"):  # the suite's curl to a BE's own http port
            target, be_path = self.bes[0], path
        else:
            status, hdrs, text = http_request(self.fe, "PUT", path, headers)
            if status != 307:
                raise CaseFailure("FE answered %d, not 307: %s" % (status, text.decode("utf-8", "replace")))
            loc = urlsplit(hdrs["location"])
            target = "%s:%d" % (loc.hostname, loc.port)
            be_path = loc.path + ("?" + loc.query if loc.query else "")
        # FileEntity / StringEntity: Content-Length; InputStreamEntity: chunked;
        # framing none: curl with -H Content-Length: -H Transfer-Encoding: (both removed).
        framing = "none" if sl.get("framing") == "none" else bool(sl.get("chunked"))
        status, hdrs, text = http_request(target, "PUT", be_path, headers, body, chunked=framing)
        reply_text = text.decode("utf-8", "replace")
        if status != 200:
            raise CaseFailure("BE answered %d: %s" % (status, reply_text))
        try:
            reply = json.loads(reply_text)
        except ValueError:
            raise CaseFailure("BE reply is not JSON: %r" % reply_text)
        try:
            self.check_reply(sl, reply, reply_text, default_load_check=True)
        except CaseFailure as e:
            if reply.get("ErrorURL"):  # as the framework, show the error log
                u = urlsplit(reply["ErrorURL"])
                _, _, log = http_request("%s:%d" % (u.hostname, u.port), "GET", u.path + "?" + u.query, {})
                raise CaseFailure("%s\nerror log:\n%s" % (e, log.decode("utf-8", "replace")[:3000]))
            raise
        if sl.get("save_txn"):
            self.txns[sl["save_txn"]] = reply.get("TxnId")
        return reply

    def check_reply(self, spec, reply, text, default_load_check=False):
        expect = spec.get("expect")
        contains = spec.get("expect_contains") or {}
        if expect is None and not contains and default_load_check:
            # StreamLoadAction.checkResult without a `check` closure.
            if str(reply.get("Status", "")).lower() != "success":
                raise CaseFailure("stream load failed\nexpected: Status Success\nactual: %s" % text)
            if reply.get("NumberTotalRows") != reply.get("NumberLoadedRows"):
                raise CaseFailure("stream load rows mismatch\nactual: %s" % text)
            return
        for k, v in (expect or {}).items():
            got = reply.get(k)
            if isinstance(v, str) and isinstance(got, str) and k.lower() == "status" and v.lower() == got.lower():
                continue
            if got != v:
                raise CaseFailure("reply field %s\nexpected: %r\nactual: %r\nreply: %s" % (k, v, got, text))
        for k, v in contains.items():
            got = reply.get(k)
            if not isinstance(got, str) or str(v) not in got:
                raise CaseFailure("reply field %s\nexpected to contain: %r\nactual: %r\nreply: %s" % (k, v, got, text))

    def stream_load_2pc(self, sp):
        """The suites commit/abort with `curl -X PUT --location-trusted -H
        txn_id:.. -H txn_operation:..` (no body, no Expect) on the FE, which
        redirects to a BE; curl follows the 307 with the credentials."""
        headers = {"Authorization": self.auth()}
        if "txn" in sp:
            tid = self.txns.get(sp["txn"])
            if tid is None:
                raise CaseFailure("no saved txn %r" % sp["txn"])
            headers["txn_id"] = str(tid)
        if "txn_id" in sp:
            headers["txn_id"] = str(sp["txn_id"])
        if "label" in sp:
            headers["label"] = str(sp["label"])
        headers["txn_operation"] = sp["operation"]
        db = sp.get("db", self.db)
        path = "/api/%s/%s_stream_load_2pc" % (db, sp["table"] + "/" if sp.get("table") else "")
        status, hdrs, text = http_request(self.fe, "PUT", path, headers)
        if status == 307:
            loc = urlsplit(hdrs["location"])
            target = "%s:%d" % (loc.hostname, loc.port)
            status, hdrs, text = http_request(target, "PUT", loc.path + ("?" + loc.query if loc.query else ""),
                                              headers)
        reply_text = text.decode("utf-8", "replace")
        try:
            reply = json.loads(reply_text)
        except ValueError:
            raise CaseFailure("2PC reply (HTTP %d) is not JSON: %r" % (status, reply_text))
        self.check_reply(sp, reply, reply_text)

    def http_get(self, hg):
        """A suite's `curl --location-trusted -u user: http://fe/<path>` GET; `{db}`
        in the path is the case's database."""
        path = hg["path"].replace("{db}", self.db)
        status, hdrs, text = http_request(self.fe, "GET", path, {"Authorization": self.auth()})
        reply_text = text.decode("utf-8", "replace")
        try:
            reply = json.loads(reply_text)
        except ValueError:
            raise CaseFailure("GET %s (HTTP %d) is not JSON: %r" % (path, status, reply_text))
        self.check_reply(hg, reply, reply_text)


def start_emulator(binary, workdir):
    log = open(os.path.join(workdir, "emulator.log"), "wb")
    proc = subprocess.Popen([binary, "--fe-port", "0", "--be-ports", "0", "--query-port", "0"],
                            stdout=subprocess.PIPE, stderr=log)
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        raise RuntimeError("emulator exited before its ready line (rc %s)" % proc.returncode)
    return proc, json.loads(line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emulator", required=True)
    ap.add_argument("cases", nargs="+")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="doris_regression.")
    proc, addrs = start_emulator(args.emulator, work)
    failed = 0
    try:
        for case_dir in args.cases:
            name = os.path.basename(os.path.normpath(case_dir))
            t0 = time.monotonic()
            try:
                r = Runner(addrs, case_dir)
                r.run()
                print("PASS %s (%.1fs)" % (name, time.monotonic() - t0))
            except CaseFailure as e:
                failed += 1
                print("FAIL %s\n%s" % (name, e))
            except Exception as e:  # a runner error is a failure too, with its trace
                import traceback
                failed += 1
                print("FAIL %s: %s\n%s" % (name, e, traceback.format_exc()))
            sys.stdout.flush()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if failed:
        with open(os.path.join(work, "emulator.log"), "rb") as f:
            tail = f.read()[-4000:].decode("utf-8", "replace")
        print("--- emulator log tail (%s)\n%s" % (work, tail))
    else:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    print("%d case(s), %d failed" % (len(args.cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
