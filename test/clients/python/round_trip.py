#!/usr/bin/python3
"""Real-client round trip with confluent-kafka-python (librdkafka).

Produces N keyed records with headers and explicit CreateTime timestamps,
consumes them back from offset 0 and verifies every key, value, header,
timestamp, offset and the per-partition order, checks ListOffsets by
timestamp (offsets_for_times), and prints one JSON summary line:
  {"client": "confluent-kafka-python", "produced": N, "consumed": N, "ok": true, "errors": [...], ...}
Exit code 0 only when everything matched.

Record content follows test/clients/content.ts (kept in step by hand):
  record i goes to partition i % P, key "k-<i>", value "v-<i>-" + filler,
  headers idx=<i>, src=<client> (+ empty="" when i % 5 == 0), timestamp base + i.
On a fresh topic partition p therefore holds i = p, p+P, p+2P, ... at offsets 0, 1, 2, ...

Run with /usr/bin/python3: Debian's python3-confluent-kafka is only seen there.
"""
import argparse
import json
import os
import sys
import time

# The record content is the compatibility matrix's (one Python copy of content.ts's rules).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'compat', 'python'))

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
import confluent_kafka  # noqa: E402

from compat_common import MAX_ERRORS, record_headers, record_key, record_value  # noqa: E402

CLIENT = 'confluent-kafka-python'


def partition_count_for(count, partitions, p):
    return 0 if p >= count else (count - p + partitions - 1) // partitions


class Report:
    def __init__(self):
        self.errors = []
        self.error_count = 0

    def error(self, msg):
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(msg)


def create_topic(args, report):
    admin = AdminClient({'bootstrap.servers': args.bootstrap})
    futures = admin.create_topics([NewTopic(args.topic, args.partitions, 1)], operation_timeout=30)
    for topic, fut in futures.items():
        try:
            fut.result(60)
        except KafkaException as e:
            err = e.args[0]
            if err.code() != KafkaError.TOPIC_ALREADY_EXISTS:
                report.error('create topic %s: %s' % (topic, err))
    wait_for_leaders(admin, args, report)


def wait_for_leaders(admin, args, report):
    """Metadata must list every partition with a leader before the first produce."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(args.topic, timeout=10).topics.get(args.topic)
        if md is not None and md.error is None and len(md.partitions) == args.partitions \
                and all(pm.leader >= 0 and pm.error is None for pm in md.partitions.values()):
            return
        time.sleep(0.1)
    report.error('topic %s has no leader for every partition after 30s' % args.topic)


def produce(args, report):
    conf = {
        'bootstrap.servers': args.bootstrap,
        'compression.type': args.compression,
        'linger.ms': args.linger_ms,
        'acks': args.acks,
        'enable.idempotence': args.idempotent,
        # Without idempotence a retried request can land after a later one; one
        # request in flight keeps the per-partition order the consumer verifies.
        'max.in.flight.requests.per.connection': 5 if args.idempotent else 1,
        'queue.buffering.max.messages': 200000,
    }
    if args.batch_size is not None:
        conf['batch.size'] = args.batch_size
    producer = Producer(conf)
    delivered = {}  # index -> (partition, offset)
    failures = []

    def on_delivery(err, msg, i):
        if err is not None:
            failures.append((i, str(err)))
        else:
            if i in delivered:
                report.error('record %d delivered twice' % i)
            delivered[i] = (msg.partition(), msg.offset())
            if args.progress > 0 and len(delivered) % args.progress == 0:
                print('progress acked=%d' % len(delivered), file=sys.stderr, flush=True)

    for i in range(args.count):
        if args.hold_at is not None and i == args.hold_at:
            # Every record before this one acknowledged, then wait for the caller's go-ahead on stdin.
            remaining = producer.flush(args.timeout)
            print('held acked=%d unacked=%d' % (len(delivered), remaining), file=sys.stderr, flush=True)
            sys.stdin.readline()
        headers = record_headers(i, CLIENT)
        while True:
            try:
                producer.produce(
                    args.topic,
                    key=record_key(i).encode(),
                    value=record_value(i).encode(),
                    partition=i % args.partitions,
                    timestamp=args.base_timestamp + i,
                    headers=[(k, v.encode()) for k, v in headers],
                    on_delivery=lambda err, msg, i=i: on_delivery(err, msg, i),
                )
                break
            except BufferError:
                producer.poll(0.05)
        if i % 1000 == 0:
            producer.poll(0)
    remaining = producer.flush(args.timeout)
    if remaining > 0:
        report.error('%d records still undelivered after %ss' % (remaining, args.timeout))
    for i, err in failures[:MAX_ERRORS]:
        report.error('delivery of record %d failed: %s' % (i, err))
    if len(failures) > MAX_ERRORS:
        report.error('%d more delivery failures' % (len(failures) - MAX_ERRORS))
    # On a fresh topic, the k-th record of partition p must have offset k.
    for i, (p, off) in delivered.items():
        if p != i % args.partitions or off != i // args.partitions:
            report.error('record %d acknowledged at partition %d offset %d, expected %d/%d'
                         % (i, p, off, i % args.partitions, i // args.partitions))
    return len(delivered)


def verify(msg, args, report, seen, next_offset):
    p = msg.partition()
    off = msg.offset()
    where = 'partition %d offset %d' % (p, off)
    if off != next_offset.get(p, 0):
        report.error('%s: expected offset %d next (gap or reorder)' % (where, next_offset.get(p, 0)))
    next_offset[p] = off + 1
    key = msg.key()
    try:
        i = int(key.decode()[2:]) if key is not None and key.startswith(b'k-') else -1
    except ValueError:
        i = -1
    if i < 0 or i >= args.count:
        report.error('%s: unexpected key %r' % (where, key))
        return
    if i in seen:
        seen[i] += 1
        report.error('%s: duplicate of record %d' % (where, i))
        return
    seen[i] = 1
    expected_index = p + off * args.partitions
    if i != expected_index:
        report.error('%s: holds record %d, expected record %d' % (where, i, expected_index))
    if msg.value() != record_value(i).encode():
        report.error('%s: value of record %d differs' % (where, i))
    headers = [(k, v.decode() if v is not None else None) for k, v in (msg.headers() or [])]
    if headers != record_headers(i, CLIENT):
        report.error('%s: headers of record %d are %r' % (where, i, headers))
    ts_type, ts = msg.timestamp()
    if ts_type != confluent_kafka.TIMESTAMP_CREATE_TIME or ts != args.base_timestamp + i:
        report.error('%s: timestamp of record %d is (%d, %d), expected CreateTime %d'
                     % (where, i, ts_type, ts, args.base_timestamp + i))


def consumer_conf(args, group):
    return {
        'bootstrap.servers': args.bootstrap,
        # confluent-kafka-python refuses a consumer without group.id; in assign mode
        # the group is never joined and nothing is committed.
        'group.id': group,
        'enable.auto.commit': False,
        'auto.offset.reset': 'earliest',
        'enable.partition.eof': True,
        'isolation.level': 'read_committed',
    }


def consume(args, report):
    seen = {}
    next_offset = {}
    consumed = 0
    expected_total = args.count
    if args.group is not None:
        consumer = Consumer(consumer_conf(args, args.group))
        consumer.subscribe([args.topic])
    else:
        consumer = Consumer(consumer_conf(args, 'sediment-round-trip-unused'))
        consumer.assign([TopicPartition(args.topic, p, 0) for p in range(args.partitions)])
    deadline = time.monotonic() + args.timeout
    eof = set()
    try:
        while time.monotonic() < deadline:
            msgs = consumer.consume(num_messages=5000, timeout=1.0)
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        eof.add(msg.partition())
                    else:
                        report.error('consume error: %s' % err)
                    continue
                eof.discard(msg.partition())
                consumed += 1
                verify(msg, args, report, seen, next_offset)
            if consumed >= expected_total and len(eof) == args.partitions:
                break
        else:
            report.error('timed out after %ss with %d of %d records' % (args.timeout, consumed, expected_total))
        if args.group is not None:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    for p in range(args.partitions):
        want = partition_count_for(args.count, args.partitions, p)
        got = next_offset.get(p, 0)
        if got != want:
            report.error('partition %d ended at offset %d, expected %d' % (p, got, want))
    duplicates = sum(n - 1 for n in seen.values())
    missing = args.count - len(seen)
    if missing > 0:
        report.error('%d records missing' % missing)
    return consumed, duplicates, missing


def check_offsets_for_times(args, report):
    """For sample records, offsets_for_times(ts) must return the first offset with timestamp >= ts."""
    consumer = Consumer(consumer_conf(args, 'sediment-round-trip-unused'))
    checked = 0
    try:
        samples = sorted({0, 1, args.count // 3, args.count // 2, args.count - 1})
        for i in samples:
            if i < 0 or i >= args.count:
                continue
            ts = args.base_timestamp + i
            query = [TopicPartition(args.topic, p, ts) for p in range(args.partitions)]
            result = consumer.offsets_for_times(query, timeout=30)
            for tp in result:
                p = tp.partition
                # first index j >= i with j % P == p, at offset j // P; none -> -1 (latest)
                j = i + ((p - i) % args.partitions)
                want = j // args.partitions if j < args.count else -1
                if tp.error is not None:
                    report.error('offsets_for_times(%d) partition %d: %s' % (ts, p, tp.error))
                elif tp.offset != want:
                    report.error('offsets_for_times(%d) partition %d: offset %d, expected %d' % (ts, p, tp.offset, want))
                checked += 1
        # A timestamp past the last record: no offset (-1).
        after = args.base_timestamp + args.count + 1000
        for tp in consumer.offsets_for_times([TopicPartition(args.topic, p, after) for p in range(args.partitions)], timeout=30):
            if tp.offset != -1:
                report.error('offsets_for_times(after end) partition %d: offset %d, expected -1' % (tp.partition, tp.offset))
            checked += 1
    finally:
        consumer.close()
    return checked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bootstrap', required=True)
    ap.add_argument('--topic', required=True)
    ap.add_argument('--count', type=int, default=1000)
    ap.add_argument('--partitions', type=int, default=3)
    ap.add_argument('--compression', default='none', choices=['none', 'gzip', 'snappy', 'lz4', 'zstd'])
    ap.add_argument('--base-timestamp', type=int, default=None,
                    help='CreateTime of record 0 (ms); record i gets base + i. Default: now - 1h, whole seconds')
    ap.add_argument('--idempotent', action='store_true', help='enable.idempotence=true')
    ap.add_argument('--acks', default='all')
    ap.add_argument('--linger-ms', type=int, default=5)
    ap.add_argument('--batch-size', type=int, default=None)
    ap.add_argument('--group', default=None, help='consume in this consumer group (subscribe) instead of assigning partitions')
    ap.add_argument('--phase', default='all', choices=['all', 'produce', 'consume'],
                    help='produce (and create), consume (and check offsets), or both')
    ap.add_argument('--no-create', action='store_true', help='do not create the topic (auto-create or already there)')
    ap.add_argument('--progress', type=int, default=0, help='print "progress acked=N" to stderr every N acknowledgements')
    ap.add_argument('--hold-at', type=int, default=None,
                    help='before record N: flush, print "held acked=N" to stderr and wait for a line on stdin')
    ap.add_argument('--timeout', type=float, default=300.0, help='seconds for each of flush and consume')
    args = ap.parse_args()
    if args.base_timestamp is None:
        args.base_timestamp = (int(time.time()) - 3600) * 1000

    report = Report()
    summary = {
        'client': CLIENT,
        'clientVersion': confluent_kafka.version()[0],
        'librdkafka': confluent_kafka.libversion()[0],
        'compression': args.compression,
        'idempotent': args.idempotent,
        'mode': 'group' if args.group is not None else 'assign',
        'topic': args.topic,
        'partitions': args.partitions,
        'baseTimestamp': args.base_timestamp,
        'produced': 0,
        'consumed': 0,
        'duplicates': 0,
        'missing': 0,
        'listOffsetsChecked': 0,
        'produceMs': 0,
        'consumeMs': 0,
    }
    try:
        if args.phase in ('all', 'produce'):
            t0 = time.monotonic()
            if not args.no_create:
                create_topic(args, report)
            summary['produced'] = produce(args, report)
            summary['produceMs'] = round((time.monotonic() - t0) * 1000)
        if args.phase in ('all', 'consume'):
            t0 = time.monotonic()
            consumed, duplicates, missing = consume(args, report)
            summary['consumed'] = consumed
            summary['duplicates'] = duplicates
            summary['missing'] = missing
            summary['consumeMs'] = round((time.monotonic() - t0) * 1000)
            summary['listOffsetsChecked'] = check_offsets_for_times(args, report)
    except Exception as e:  # report, never a bare traceback instead of the summary line
        report.error('%s: %s' % (type(e).__name__, e))
    summary['ok'] = report.error_count == 0
    summary['errorCount'] = report.error_count
    summary['errors'] = report.errors
    print(json.dumps(summary), flush=True)
    sys.exit(0 if summary['ok'] else 1)


if __name__ == '__main__':
    main()
