#!/usr/bin/env python3
"""A sync device in Python, standard library only: keeps `todo`'s tasks and lists in a local
SQLite file and syncs them with `todo serve` over its HTTP protocol
(Sources/CodableSyncServer/openapi.yaml), as the token's account.

    python3 sync_device.py --server http://127.0.0.1:8080 --token TOKEN --db FILE add "Buy milk" [--list groceries]
    python3 sync_device.py ... sync          # push local changes, then pull the account's
    python3 sync_device.py ... list          # the tasks' titles, one per line, sorted
    python3 sync_device.py ... list --ids    # ID<TAB>done<TAB>title
    python3 sync_device.py ... done ID       # ID: a task's id or a unique prefix of it
    python3 sync_device.py ... remove ID
    python3 sync_device.py ... account       # the token's account

The server and token may come from SYNC_SERVER and SYNC_TOKEN. The local file (its own schema,
not `todo`'s):

    tasks(id, title, due_date, is_completed)   TodoItem: dueDate in seconds since 2001-01-01
    lists(id, name, task_ids)                  TaskList: its tasks' ids, as a JSON array
    outbox(seq AUTOINCREMENT, tbl, id)         local changes, written by triggers
    state(key, value)                          device, pulled, epoch, token, token_upto,
                                               acknowledged, restart, applying
    skipped(tbl, id, version)                  server changes a pull left alone (local change pending)
    seen(tbl, id)                              rows pulled while starting over
    refused(tbl, id, reason, message)          changes the server refused (the server's value is taken)

A refused change is dropped: the row takes the server's value (or goes, when the server has
none), and the refusal is kept in `refused` and printed. Conflicts are printed; the push wins.
Exit status: 0, 1 for an error (the changes stay in the outbox for the next sync), 2 for usage.
"""

import argparse
import fcntl
import ipaddress
import json
import math
import os
import sqlite3
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

BATCH = 500  # the most changes one push may carry, and the pull's page size
RETRIES = 8  # attempts for a request that meets 429, 500, 503 or a network failure
KEYS = {"tasks": ["id", "title", "dueDate", "isCompleted"], "lists": ["id", "name", "tasks"]}
NON_FINITE = {"NaN": math.nan, "+Infinity": math.inf, "-Infinity": -math.inf}


class SyncError(Exception):
    """A failure the user sees; the local changes are kept."""


class Refused(SyncError):
    """The server's error answer that will not pass by trying again: its status and code."""

    def __init__(self, message, status, code):
        super().__init__(message)
        self.status, self.code = status, code


# MARK: Local storage

SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, due_date REAL,
                                  is_completed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS lists (id TEXT PRIMARY KEY, name TEXT NOT NULL, task_ids TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS skipped (tbl TEXT, id TEXT, version INTEGER NOT NULL, PRIMARY KEY (tbl, id));
CREATE TABLE IF NOT EXISTS seen (tbl TEXT, id TEXT, PRIMARY KEY (tbl, id));
CREATE TABLE IF NOT EXISTS refused (tbl TEXT, id TEXT, reason TEXT, message TEXT, PRIMARY KEY (tbl, id));
INSERT OR IGNORE INTO state (key, value) VALUES ('applying', 0), ('pulled', 0);
"""


def open_db(path):
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    db.execute("INSERT OR IGNORE INTO state (key, value) VALUES ('device', ?)", (str(uuid.uuid4()).upper(),))
    # Every local write of a synced table is an outbox entry, except while pulled changes are applied.
    skip = "WHEN (SELECT value FROM state WHERE key = 'applying') IS NOT 1"
    for table in KEYS:
        for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            db.execute(f"""CREATE TRIGGER IF NOT EXISTS outbox_{table}_{event.lower()} AFTER {event} ON {table} {skip}
                           BEGIN INSERT INTO outbox (tbl, id) VALUES ('{table}', {row}.id); END""")
    return db


class Transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on an exception); `applying` marks pulled writes."""

    def __init__(self, db, applying=False):
        self.db, self.applying = db, applying

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        if self.applying:
            self.db.execute("UPDATE state SET value = 1 WHERE key = 'applying'")
        return self.db

    def __exit__(self, kind, error, trace):
        if kind is None:
            if self.applying:
                self.db.execute("UPDATE state SET value = 0 WHERE key = 'applying'")
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")
        return False


def get_state(db, key, default=None):
    row = db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return default if row is None or row[0] is None else row[0]


def set_state(db, key, value):
    db.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", (key, value))


# MARK: Values (the models' Codable form as JSON text)

def encode(db, table, row_id):
    """The row's value as JSON text, or None when it is gone (a delete)."""
    if table == "tasks":
        task = task_value(db, row_id)
        return None if task is None else json.dumps(task, ensure_ascii=False, allow_nan=False)
    row = db.execute("SELECT id, name, task_ids FROM lists WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        return None
    tasks = [t for t in (task_value(db, i) for i in json.loads(row[2])) if t is not None]
    return json.dumps({"id": row[0], "name": row[1], "tasks": tasks}, ensure_ascii=False, allow_nan=False)


def task_value(db, row_id):
    row = db.execute("SELECT id, title, due_date, is_completed FROM tasks WHERE id = ?", (row_id,)).fetchone()
    if row is None:
        return None
    value = {"id": row[0], "title": row[1], "isCompleted": bool(row[3])}
    if row[2] is not None:
        due = row[2]
        value["dueDate"] = due if math.isfinite(due) else ("NaN" if math.isnan(due) else ("+Infinity" if due > 0 else "-Infinity"))
    return value


def number(value):
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def save_task(db, value, replace=True):
    """Saves a task's value; `replace=False` only creates it when missing (a task inside a list)."""
    if not isinstance(value.get("id"), str) or not isinstance(value.get("title"), str) or not isinstance(value.get("isCompleted"), bool):
        raise ValueError("a task needs id, title and isCompleted")
    due = number(value["dueDate"]) if value.get("dueDate") is not None else None
    verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
    db.execute(f"{verb} INTO tasks (id, title, due_date, is_completed) VALUES (?, ?, ?, ?)",
               (value["id"], value["title"], due, int(value["isCompleted"])))


def apply_value(db, table, row_id, text):
    """Stores a pulled value (None: deletes the row). Raises ValueError for a value it cannot read."""
    if text is None:
        db.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
        if table == "tasks":  # a task's links go with it, as on the server
            for list_id, ids in db.execute("SELECT id, task_ids FROM lists").fetchall():
                kept = [i for i in json.loads(ids) if i != row_id]
                if len(kept) != len(json.loads(ids)):
                    db.execute("UPDATE lists SET task_ids = ? WHERE id = ?", (json.dumps(kept), list_id))
        return
    value = json.loads(text, parse_constant=lambda name: NON_FINITE.get(name))
    if not isinstance(value, dict) or value.get("id") != row_id:
        raise ValueError(f"the value of {table} {row_id} names another row")
    if table == "tasks":
        save_task(db, value)
        return
    if not isinstance(value.get("name"), str) or not isinstance(value.get("tasks"), list):
        raise ValueError("a list needs id, name and tasks")
    for task in value["tasks"]:
        if not isinstance(task, dict):
            raise ValueError("a list's task is not an object")
        save_task(db, task, replace=False)  # related values are created only when missing
    ids = [task["id"] for task in value["tasks"]]
    db.execute("INSERT OR REPLACE INTO lists (id, name, task_ids) VALUES (?, ?, ?)", (row_id, value["name"], json.dumps(ids)))


# MARK: HTTP

class Server:
    def __init__(self, url, token, allow_insecure_http=False):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SyncError(f"--server must be an http:// or https:// URL, not {url!r}")
        if parts.scheme == "http" and not allow_insecure_http and not is_loopback(parts.hostname):
            raise SyncError("http:// to another machine would send the token in clear: use https:// (or --allow-insecure-http)")
        path = parts.path.rstrip("/") or "/sync"
        self.base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        self.token = token

    def call(self, route, body=None, timeout=120):
        """The JSON answer of a route; retries 429, 500, 503 and network failures with the same body."""
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        delay = 0.5
        for attempt in range(RETRIES):
            request = urllib.request.Request(f"{self.base}/{route}", data=data, method="GET" if body is None else "POST")
            request.add_header("Authorization", f"Bearer {self.token}")
            if data is not None:
                request.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(request, timeout=timeout) as answer:
                    return json.loads(answer.read())
            except urllib.error.HTTPError as error:
                status, text = error.code, error.read()
                try:
                    failure = json.loads(text)
                    code, message = failure.get("error", "?"), failure.get("message", "")
                except (ValueError, AttributeError):
                    code, message = "?", text[:500].decode("utf-8", "replace")
                if status in (429, 500, 503) and attempt + 1 < RETRIES:
                    time.sleep(delay)
                    delay = min(delay * 2, 10)
                    continue
                if status == 401:
                    raise SyncError(f"the server refused the token ({message}); ask for a new one: todo account token NAME")
                raise Refused(f"the server answered /{route} with {status} {code}: {message}", status, code)
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as error:
                if attempt + 1 < RETRIES:
                    time.sleep(delay)
                    delay = min(delay * 2, 10)
                    continue
                raise SyncError(f"cannot reach the sync server at {self.base}: {error}")
            except ValueError as error:
                raise SyncError(f"the answer of /{route} is not JSON: {error}")
        raise SyncError(f"/{route} failed {RETRIES} times")


def is_loopback(host):
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require(condition, what):
    """Checks an answer before anything of it is applied (a broken or hostile server)."""
    if not condition:
        raise SyncError(f"the server's answer breaks the protocol: {what}")


def is_name(value, most):
    return isinstance(value, str) and 0 < len(value) <= most


def is_version(value, least=0):
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= 2**63 - 1


# MARK: Sync

class Device:
    def __init__(self, db, server, say):
        self.db, self.server, self.say = db, server, say
        self.sent = self.received = 0

    def sync(self):
        # Push, then pull; once more when the pull queued rows to push (starting over uploads them).
        for _ in range(3):
            while self.push_batch():
                pass
            while self.pull_batch():
                pass
            if self.db.execute("SELECT count(*) FROM outbox").fetchone()[0] == 0:
                break

    def push_batch(self):
        db = self.db
        token, upto = get_state(db, "token"), get_state(db, "token_upto")
        entries = []
        if token is not None:
            # An unanswered push goes again whole, with its token: the server recognises it.
            entries = db.execute("SELECT seq, tbl, id FROM outbox WHERE seq <= ? ORDER BY seq", (upto,)).fetchall()
            if not entries:
                with Transaction(db):
                    db.execute("DELETE FROM state WHERE key IN ('token', 'token_upto')")
                token = None
        if token is None:
            entries = db.execute("SELECT seq, tbl, id FROM outbox ORDER BY seq LIMIT ?", (BATCH,)).fetchall()
        if not entries:
            return False
        latest = {}
        for seq, table, row_id in entries:
            latest[(table, row_id)] = seq
        pulled = get_state(db, "pulled", 0)
        skipped = {(t, i): v for t, i, v in db.execute("SELECT tbl, id, version FROM skipped")}
        changes = []
        for (table, row_id), seq in sorted(latest.items(), key=lambda item: item[1]):
            value = encode(db, table, row_id)
            # Over a server change a pull left alone: just below it, so that the server reports it.
            base = min(pulled, max(skipped[(table, row_id)], 1) - 1) if (table, row_id) in skipped else pulled
            change = {"table": table, "id": row_id, "value": value, "seq": seq, "version": base}
            if value is not None:
                change["keys"] = KEYS[table]
            changes.append(change)
        last = entries[-1][0]
        resent = token is not None
        if token is None:
            token = str(uuid.uuid4()).upper()
            with Transaction(db):  # recorded before it is sent: a lost answer sends it again
                set_state(db, "token", token)
                set_state(db, "token_upto", last)
        push = {"device": get_state(db, "device"), "token": token, "acknowledged": get_state(db, "acknowledged"),
                "changes": changes, "keepsRefused": True}
        try:
            answer = self.server.call("push", push)
        except Refused as refusal:
            if (refusal.status, refusal.code) != (409, "startOverNeeded"):
                raise
            # The server forgot this device's pushes (offline past its retention, or a copy of an
            # old file): everything is pulled again under a new device id; the outbox stays.
            self.start_over("deleteMissing", None, new_device=True)
            return True
        pushed = {(c["table"], c["id"]) for c in changes}
        require(isinstance(answer, dict), "a push's answer is not an object")
        conflicts, refused = answer.get("conflicts"), answer.get("refused", [])
        require(isinstance(conflicts, list) and isinstance(refused, list), "no conflicts or refused lists")
        for entry in conflicts + refused:
            require(isinstance(entry, dict) and (entry.get("table"), entry.get("id")) in pushed, "it names a row the push did not carry")
        device = answer.get("device")
        require(device is None or is_name(device, 200), "its device id is not 1 to 200 characters")
        refused_rows = {(r["table"], r["id"]) for r in refused}
        with Transaction(db, applying=True):
            db.execute("DELETE FROM outbox WHERE seq <= ?", (last,))
            for table, row_id in pushed - refused_rows:
                db.execute("DELETE FROM skipped WHERE tbl = ? AND id = ?", (table, row_id))
                db.execute("DELETE FROM refused WHERE tbl = ? AND id = ?", (table, row_id))
            pending = set(db.execute("SELECT tbl, id FROM outbox").fetchall())
            for refusal in refused:
                row = (refusal["table"], refusal["id"])
                db.execute("INSERT OR REPLACE INTO refused (tbl, id, reason, message) VALUES (?, ?, ?, ?)",
                           (row[0], row[1], str(refusal.get("reason")), str(refusal.get("message"))))
                self.say(f"refused: {row[0]} {row[1]} ({refusal.get('reason')}): {refusal.get('message')}; the server's value is kept")
                if row not in pending:
                    try:
                        apply_value(db, row[0], row[1], refusal.get("serverValue"))
                    except ValueError as error:
                        self.say(f"cannot read the server's value of {row[0]} {row[1]}: {error}")
            db.execute("DELETE FROM state WHERE key IN ('token', 'token_upto')")
            set_state(db, "acknowledged", token)
            if device is not None:
                set_state(db, "device", device)
        for conflict in conflicts:
            if conflict.get("lostHere"):
                self.say(f"conflict: {conflict['table']} {conflict['id']}: this device's delete lost (other rows need it)")
            else:
                self.say(f"conflict: {conflict['table']} {conflict['id']}: this device's change replaced another writer's")
        self.sent += len(changes)
        return resent or len(entries) == BATCH

    def pull_batch(self):
        db = self.db
        after, epoch, restarting = get_state(db, "pulled", 0), get_state(db, "epoch"), get_state(db, "restart")
        known_horizon = get_state(db, "horizon")
        request = {"device": get_state(db, "device"), "after": after, "limit": BATCH,
                   "epoch": epoch, "startsOver": True, "restarting": restarting is not None}
        if known_horizon is not None:
            request["horizon"] = int(known_horizon)
        answer = self.server.call("pull", request)
        require(isinstance(answer, dict), "a pull's answer is not an object")
        changes, version, more = answer.get("changes"), answer.get("version"), answer.get("more")
        require(isinstance(changes, list) and len(changes) <= BATCH, "its changes are not a list of at most the limit")
        require(is_version(version) and isinstance(more, bool), "its version or more is missing")
        require(answer.get("epoch") is None or is_name(answer.get("epoch"), 1000), "its epoch is not 1 to 1,000 characters")
        require(answer.get("horizon") is None or is_version(answer.get("horizon")), "its horizon is not a version")
        for change in changes:
            require(isinstance(change, dict) and is_name(change.get("table"), 255), "a change has no table")
            require(is_name(change.get("id"), 1000) and is_version(change.get("version"), 1), "a change has no id or version")
            require(change.get("value") is None or isinstance(change.get("value"), str), "a change's value is not text")
        if self.start_over_if_needed(after, epoch, known_horizon, answer):
            return True
        if version <= after and restarting is None:
            return False
        # A server from before the pull's `horizon` answers a start over's page below its horizon
        # as it would a device behind it (nothing, no more, the same version): not the last page.
        if restarting is not None and after > 0 and not changes and not more and version == after \
                and answer.get("horizon") is not None and answer["horizon"] > after:
            return False
        latest = {}
        for change in changes:
            if change["table"] in KEYS:
                latest[(change["table"], change["id"])] = change
        with Transaction(db, applying=True):
            pending = set(db.execute("SELECT tbl, id FROM outbox").fetchall())
            # Saves before deletes, lists after their tasks.
            order = sorted(latest.values(), key=lambda c: (c.get("value") is None, c["table"] != "tasks"))
            for change in order:
                row = (change["table"], change["id"])
                if restarting is not None:
                    db.execute("INSERT OR IGNORE INTO seen (tbl, id) VALUES (?, ?)", row)
                if row in pending:  # its push reaches the server later, and wins
                    db.execute("INSERT OR IGNORE INTO skipped (tbl, id, version) VALUES (?, ?, ?)", row + (change["version"],))
                    continue
                try:
                    apply_value(db, row[0], row[1], change.get("value"))
                except (ValueError, KeyError) as error:
                    self.say(f"cannot read {row[0]} {row[1]}: {error}; left as it is")
                    continue
                db.execute("DELETE FROM skipped WHERE tbl = ? AND id = ?", row)
            set_state(db, "pulled", max(version, after))
            if answer.get("horizon") is not None:
                set_state(db, "horizon", answer["horizon"])
            if restarting is not None and not more:
                self.finish_start_over(restarting)
        self.received += len(changes)
        return more

    def start_over_if_needed(self, after, known, known_horizon, answer):
        db = self.db
        how = None
        epoch = answer.get("epoch")
        if epoch is not None and epoch != known:
            if known is None:
                with Transaction(db):
                    set_state(db, "epoch", epoch)
            else:
                how = "upload"
        if answer.get("ahead") is True:
            how = "upload"
        horizon = answer.get("horizon")
        # Behind: the horizon moved past this device's version since the last answer it applied
        # (pages from 0 are below a horizon that was there when they began: not behind).
        if how is None and after > 0 and horizon is not None and after < horizon and horizon > int(known_horizon or 0):
            how = "deleteMissing"
        if how is None:
            return False
        self.start_over(how, epoch)
        return True

    def start_over(self, how, epoch, new_device=False):
        db = self.db
        restarting = get_state(db, "restart")
        with Transaction(db):
            set_state(db, "restart", "upload" if restarting == "upload" else how)
            if epoch is not None:
                set_state(db, "epoch", epoch)
            set_state(db, "pulled", 0)
            if new_device:
                set_state(db, "device", str(uuid.uuid4()).upper())
                db.execute("DELETE FROM state WHERE key IN ('token', 'token_upto', 'acknowledged')")
            if how == "upload":  # the restored server lacks rows, and has older values of others
                for table in KEYS:
                    db.execute(f"INSERT INTO outbox (tbl, id) SELECT '{table}', id FROM {table}")
            db.execute("DELETE FROM seen")
            db.execute("DELETE FROM skipped")
        self.say("the server was restored: receiving everything again, sending what it lost" if how == "upload"
                 else "offline longer than the server remembers: receiving everything again")

    def finish_start_over(self, how):
        """In the last pull's transaction: the local rows the server did not send are uploaded or deleted."""
        db = self.db
        pending = set(db.execute("SELECT tbl, id FROM outbox").fetchall())
        seen = set(db.execute("SELECT tbl, id FROM seen").fetchall())
        for table in KEYS:
            for (row_id,) in db.execute(f"SELECT id FROM {table}").fetchall():
                if (table, row_id) in seen or (table, row_id) in pending:
                    continue
                if how == "upload":
                    db.execute("INSERT INTO outbox (tbl, id) VALUES (?, ?)", (table, row_id))
                else:
                    apply_value(db, table, row_id, None)
        db.execute("DELETE FROM seen")
        db.execute("DELETE FROM state WHERE key = 'restart'")


# MARK: Commands

def find_task(db, prefix):
    prefix = prefix.strip().upper()
    matches = db.execute("SELECT id, title FROM tasks WHERE upper(id) LIKE ? ESCAPE '\\' LIMIT 10",
                         (prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",)).fetchall()
    if not prefix or len(matches) != 1:
        raise SyncError(f"no task has the id {prefix!r}" if not matches else f"{prefix!r} matches more than one task")
    return matches[0][0]


def main(argv):
    parser = argparse.ArgumentParser(description="A todo sync device in Python (see the module's docstring).")
    parser.add_argument("--server", default=os.environ.get("SYNC_SERVER"), help="http://HOST:PORT (the routes are under /sync)")
    parser.add_argument("--token", default=os.environ.get("SYNC_TOKEN"), help="the account's bearer token")
    parser.add_argument("--db", default=os.environ.get("SYNC_DEVICE_DB", "sync_device.sqlite"), help="the local SQLite file")
    parser.add_argument("--allow-insecure-http", action="store_true", help="allow http:// to another machine")
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add", help="add a task")
    add.add_argument("title")
    add.add_argument("--list", help="the list to add it to (made if new)")
    add.add_argument("--due", type=float, help="its due date, in seconds since 2001-01-01T00:00:00Z")
    listing = commands.add_parser("list", help="the tasks' titles, one per line, sorted")
    listing.add_argument("--ids", action="store_true", help="ID<TAB>done<TAB>title")
    commands.add_parser("done", help="mark a task done").add_argument("id")
    commands.add_parser("remove", help="delete a task").add_argument("id")
    commands.add_parser("sync", help="push local changes, then pull the account's")
    commands.add_parser("account", help="the token's account")
    args = parser.parse_args(argv)

    db = open_db(args.db)
    say = lambda line: print(line.encode("unicode_escape").decode("ascii") if not line.isprintable() else line, file=sys.stderr)
    if args.command == "add":
        if not args.title.strip():
            raise SyncError("the title must not be empty")
        task_id = str(uuid.uuid4()).upper()
        with Transaction(db):
            db.execute("INSERT INTO tasks (id, title, due_date, is_completed) VALUES (?, ?, ?, 0)", (task_id, args.title, args.due))
            if args.list:
                found = db.execute("SELECT id, task_ids FROM lists WHERE lower(name) = lower(?)", (args.list.strip(),)).fetchone()
                list_id, ids = found if found else (str(uuid.uuid4()).upper(), "[]")
                if not found:
                    db.execute("INSERT INTO lists (id, name, task_ids) VALUES (?, ?, '[]')", (list_id, args.list.strip()))
                db.execute("UPDATE lists SET task_ids = ? WHERE id = ?", (json.dumps(json.loads(ids) + [task_id]), list_id))
        print(f"Added {task_id[:8]}: {args.title}")
    elif args.command == "list":
        for task_id, done, title in db.execute("SELECT id, is_completed, title FROM tasks ORDER BY title, id"):
            print(f"{task_id}\t{'x' if done else ' '}\t{title}" if args.ids else title)
    elif args.command in ("done", "remove"):
        with Transaction(db):
            task_id = find_task(db, args.id)
            if args.command == "done":
                db.execute("UPDATE tasks SET is_completed = 1 WHERE id = ?", (task_id,))
            else:
                db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
                for list_id, ids in db.execute("SELECT id, task_ids FROM lists").fetchall():
                    if task_id in json.loads(ids):
                        db.execute("UPDATE lists SET task_ids = ? WHERE id = ?",
                                   (json.dumps([i for i in json.loads(ids) if i != task_id]), list_id))
    else:
        if not args.server or not args.token:
            raise SyncError("this needs --server URL and --token TOKEN (or SYNC_SERVER and SYNC_TOKEN)")
        server = Server(args.server, args.token, args.allow_insecure_http)
        if args.command == "account":
            print(server.call("account")["account"])
            return 0
        # One sync of a file at a time (another process's too).
        lock = open(args.db + ".sync-lock", "a")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SyncError(f"another sync of {args.db} is running")
        device = Device(db, server, say)
        device.sync()
        print(f"Synced: {device.sent} change{'' if device.sent == 1 else 's'} sent, {device.received} received.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SyncError as error:
        print(f"Error: {error}", file=sys.stderr)
        sys.exit(1)
