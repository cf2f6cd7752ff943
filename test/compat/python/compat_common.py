"""Shared parts of the compatibility-matrix programs in Python (kafka-python and
confluent-kafka-python): the record content of test/clients/content.ts (kept in
step by hand), a verifier for consumed records, and the operation report printed
as the last line:

  {"client", "clientVersion", "ok", "codecs", "idempotent", "count",
   "operations": [{"name", "ok", "detail", "ms"}], "notes", "errorCount", "errors"}

Only the standard library: each client program runs under its own interpreter.
"""
import argparse
import json
import sys
import time
import traceback

ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
MAX_ERRORS = 20
ALL_CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']


def record_key(i):
    return 'k-%d' % i


def record_value(i):
    length = (i * 7919) % 97 + (10000 if i % 1000 == 0 else 0)
    return 'v-%d-' % i + ''.join(ALPHABET[(i + j * 31) % 36] for j in range(length))


def record_headers(i, client):
    headers = [('idx', str(i)), ('src', client)]
    if i % 5 == 0:
        headers.append(('empty', ''))
    return headers


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument('--bootstrap', required=True)
    ap.add_argument('--topic', required=True)
    ap.add_argument('--group', required=True)
    ap.add_argument('--count', type=int, default=50000)
    ap.add_argument('--partitions', type=int, default=3)
    ap.add_argument('--codecs', default=','.join(ALL_CODECS))
    ap.add_argument('--base-timestamp', type=int, default=None)
    ap.add_argument('--timeout-ms', type=int, default=240000)
    args = ap.parse_args()
    args.codecs = args.codecs.split(',')
    if args.base_timestamp is None:
        args.base_timestamp = (int(time.time()) - 3600) * 1000
    return args


def slices(args):
    """Contiguous record ranges, one per codec, produced in this order."""
    n = len(args.codecs)
    return [(codec, args.count * s // n, args.count * (s + 1) // n) for s, codec in enumerate(args.codecs)]


def partition_count(args, p):
    return 0 if p >= args.count else (args.count - p + args.partitions - 1) // args.partitions


def expected_offset_for_timestamp(args, i, p):
    """First record j >= i of partition p, at offset j // P; -1 when there is none."""
    j = i + ((p - i) % args.partitions)
    return j // args.partitions if j < args.count else -1


def timestamp_samples(args):
    return sorted(i for i in {0, 1, args.count // 3, args.count // 2, args.count - 1} if 0 <= i < args.count)


class Report:
    def __init__(self, client, client_version, args, idempotent):
        self.summary = {
            'client': client,
            'clientVersion': client_version,
            'ok': False,
            'codecs': args.codecs,
            'idempotent': idempotent,
            'count': args.count,
            'operations': [],
            'notes': [],
            'errorCount': 0,
            'errors': [],
        }
        self.current = 'setup'
        self.op_errors = 0

    def error(self, msg):
        self.summary['errorCount'] += 1
        self.op_errors += 1
        if len(self.summary['errors']) < MAX_ERRORS:
            self.summary['errors'].append('%s: %s' % (self.current, msg))

    def note(self, msg):
        self.summary['notes'].append(msg)

    def op(self, name, step):
        """Runs one matrix operation; it passes when it raises nothing and reports no error."""
        self.current = name
        self.op_errors = 0
        t0 = time.monotonic()
        try:
            detail = step() or ''
        except Exception as e:  # reported, never a bare traceback instead of the summary
            tb = traceback.extract_tb(e.__traceback__)
            where = ' at line %d' % tb[-1].lineno if tb else ''
            detail = '%s: %s%s' % (type(e).__name__, e, where)
            self.error(detail)
        self.summary['operations'].append({
            'name': name, 'ok': self.op_errors == 0, 'detail': detail, 'ms': round((time.monotonic() - t0) * 1000)})

    def finish(self):
        self.summary['ok'] = self.summary['errorCount'] == 0
        print(json.dumps(self.summary), flush=True)
        sys.exit(0 if self.summary['ok'] else 1)


class Verifier:
    """Partition p must hold records p, p+P, ... at offsets 0, 1, ... with the
    expected key, value, headers and CreateTime."""

    def __init__(self, args, client, report):
        self.args = args
        self.client = client
        self.report = report
        self.seen = bytearray(args.count)
        self.next_offset = [0] * args.partitions
        self.consumed = 0
        self.duplicates = 0

    def complete(self):
        return all(self.next_offset[p] >= partition_count(self.args, p) for p in range(self.args.partitions))

    def observe(self, p, off, key, value, headers, ts, create_time):
        """headers: list of (str, bytes-or-None); create_time: bool."""
        args = self.args
        self.consumed += 1
        where = 'partition %d offset %d' % (p, off)
        if p < 0 or p >= args.partitions:
            self.report.error('%s: unexpected partition' % where)
            return
        if off != self.next_offset[p]:
            self.report.error('%s: expected offset %d next (gap or reorder)' % (where, self.next_offset[p]))
        self.next_offset[p] = off + 1
        try:
            i = int(key[2:].decode()) if key is not None and key.startswith(b'k-') else -1
        except ValueError:
            i = -1
        if i < 0 or i >= args.count:
            self.report.error('%s: unexpected key %r' % (where, key))
            return
        if self.seen[i]:
            self.duplicates += 1
            self.report.error('%s: duplicate of record %d' % (where, i))
            return
        self.seen[i] = 1
        expected_index = p + off * args.partitions
        if i != expected_index:
            self.report.error('%s: holds record %d, expected record %d' % (where, i, expected_index))
        if value != record_value(i).encode():
            self.report.error('%s: value of record %d differs' % (where, i))
        got = [(k, v.decode() if v is not None else None) for k, v in headers]
        if got != record_headers(i, self.client):
            self.report.error('%s: headers of record %d are %r' % (where, i, got))
        if not create_time or ts != args.base_timestamp + i:
            self.report.error('%s: timestamp of record %d is %d (CreateTime %s), expected CreateTime %d'
                              % (where, i, ts, create_time, args.base_timestamp + i))

    def finish(self):
        for p in range(self.args.partitions):
            want = partition_count(self.args, p)
            if self.next_offset[p] != want:
                self.report.error('partition %d ended at offset %d, expected %d' % (p, self.next_offset[p], want))
        missing = self.args.count - sum(self.seen)
        if missing > 0:
            self.report.error('%d records missing' % missing)
