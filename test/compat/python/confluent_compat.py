#!/usr/bin/python3
"""Compatibility-matrix program for confluent-kafka-python (librdkafka), run with
/usr/bin/python3 (Debian's python3-confluent-kafka) and with the venv of the
PyPI wheel (test/compat/install.sh confluent-kafka). The produce/consume logic
follows test/clients/python/round_trip.py; this program adds one topic for all
codecs, the consumer group with commits, the offset listings and the lag.
Against one broker it:
  - creates the topic (AdminClient.create_topics) and describes its configs;
  - produces N keyed records with headers and CreateTime timestamps, one slice
    per codec (none, gzip, snappy, lz4, zstd), idempotent, acks=all;
  - consumes them in a consumer group (subscribe) with a synchronous commit
    after every batch, verifying every byte and the per-partition order;
  - lists all topics (list_topics() without a topic: an all-topics Metadata);
  - subscribes by regex (^<topic>-rx-.*) to two topics made for it and reads
    their records in a consumer group of its own;
  - lists offsets: get_watermark_offsets (earliest, latest) and offsets_for_times;
  - describes the group: list_groups (state, members) and the lag from
    committed() against the high watermarks.
Prints one JSON summary line last (see compat_common.py).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import confluent_kafka  # noqa: E402
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic  # noqa: E402

from compat_common import (  # noqa: E402
    Report, Verifier, expected_offset_for_timestamp, parse_args, partition_count, record_headers,
    record_key, record_value, slices, timestamp_samples)

CLIENT = 'confluent-kafka-python'


def create_topic(admin, args, report):
    for fut in admin.create_topics([NewTopic(args.topic, args.partitions, 1)], operation_timeout=30).values():
        fut.result(60)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(args.topic, timeout=10).topics.get(args.topic)
        if md is not None and md.error is None and len(md.partitions) == args.partitions \
                and all(pm.leader >= 0 and pm.error is None for pm in md.partitions.values()):
            return '%d partitions' % args.partitions
        time.sleep(0.1)
    report.error('no leader for every partition after 30 s')
    return ''


def describe_configs(admin, args, report):
    futures = admin.describe_configs([ConfigResource('topic', args.topic)])
    configs = next(iter(futures.values())).result(30)
    for key, want in (('cleanup.policy', 'delete'), ('compression.type', 'producer')):
        entry = configs.get(key)
        if entry is None or entry.value != want:
            report.error('%s = %r, expected %r' % (key, None if entry is None else entry.value, want))
    retention = configs.get('retention.ms')
    return '%d entries, retention.ms=%s' % (len(configs), None if retention is None else retention.value)


def list_topics(admin, args, report):
    md = admin.list_topics(timeout=30)
    t = md.topics.get(args.topic)
    if t is None:
        report.error('list_topics() does not list %s (%d topics)' % (args.topic, len(md.topics)))
    elif len(t.partitions) != args.partitions:
        report.error('list_topics(): %s has %d partitions' % (args.topic, len(t.partitions)))
    if len(md.brokers) != 1:
        report.error('list_topics(): %d brokers' % len(md.brokers))
    return '%d topics, %d broker(s)' % (len(md.topics), len(md.brokers))


def regex_subscribe(admin, args, report):
    names = ['%s-rx-a' % args.topic, '%s-rx-b' % args.topic]
    for fut in admin.create_topics([NewTopic(n, 1, 1) for n in names], operation_timeout=30).values():
        fut.result(60)
    producer = Producer({'bootstrap.servers': args.bootstrap, 'client.id': 'sediment-compat-confluent'})
    for n in names:
        producer.produce(n, key=n.encode(), value=b'rx')
    if producer.flush(30) > 0:
        report.error('regex topics: records undelivered')
    pattern = '^%s-rx-.*' % args.topic
    consumer = Consumer(dict(consumer_conf(args, args.group + '-rx'), **{'topic.metadata.refresh.interval.ms': 1000}))
    seen = {}
    deadline = time.monotonic() + 60
    try:
        consumer.subscribe([pattern])
        while len(seen) < len(names) and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                seen[m.topic()] = m.key()
        assigned = sorted(tp.topic for tp in consumer.assignment())
    finally:
        consumer.close()
    if sorted(seen) != names:
        report.error('subscribe(%s) read from %s, expected %s' % (pattern, sorted(seen), names))
    elif any(seen[n] != n.encode() for n in names):
        report.error('subscribe(%s): unexpected keys %r' % (pattern, seen))
    if assigned != names:
        report.error('subscribe(%s) assigned %s, expected %s' % (pattern, assigned, names))
    return '%s: %s' % (pattern, ', '.join(sorted(seen)))


def produce(args, report):
    parts = []
    for codec, start, end in slices(args):
        producer = Producer({
            'bootstrap.servers': args.bootstrap,
            'client.id': 'sediment-compat-confluent',
            'compression.type': codec,
            'enable.idempotence': True,
            'acks': 'all',
            'linger.ms': 5,
            'queue.buffering.max.messages': 200000,
        })
        failures = []
        acked = [0]

        def on_delivery(err, msg, i):
            if err is not None:
                failures.append('record %d: %s' % (i, err))
                return
            acked[0] += 1
            if msg.partition() != i % args.partitions or msg.offset() != i // args.partitions:
                report.error('record %d acknowledged at %d/%d, expected %d/%d'
                             % (i, msg.partition(), msg.offset(), i % args.partitions, i // args.partitions))

        for i in range(start, end):
            while True:
                try:
                    producer.produce(
                        args.topic, key=record_key(i).encode(), value=record_value(i).encode(),
                        partition=i % args.partitions, timestamp=args.base_timestamp + i,
                        headers=[(k, v.encode()) for k, v in record_headers(i, CLIENT)],
                        on_delivery=lambda err, msg, i=i: on_delivery(err, msg, i))
                    break
                except BufferError:
                    producer.poll(0.05)
            if i % 1000 == 0:
                producer.poll(0)
        remaining = producer.flush(args.timeout_ms / 1000)
        if remaining > 0:
            report.error('%s slice: %d records undelivered' % (codec, remaining))
        for f in failures[:10]:
            report.error(f)
        if acked[0] != end - start:
            report.error('%s slice: %d of %d records acknowledged' % (codec, acked[0], end - start))
        parts.append('%s %d' % (codec, end - start))
    return '%d records (%s), idempotent' % (args.count, ', '.join(parts))


def consumer_conf(args, group):
    return {
        'bootstrap.servers': args.bootstrap,
        'client.id': 'sediment-compat-confluent',
        'group.id': group,
        'enable.auto.commit': False,
        'auto.offset.reset': 'earliest',
        'isolation.level': 'read_committed',
    }


def consume(args, report):
    consumer = Consumer(consumer_conf(args, args.group))
    verifier = Verifier(args, CLIENT, report)
    commits = 0
    deadline = time.monotonic() + args.timeout_ms / 1000
    try:
        consumer.subscribe([args.topic])
        while not verifier.complete():
            if time.monotonic() > deadline:
                report.error('timed out with %d of %d records' % (verifier.consumed, args.count))
                break
            msgs = consumer.consume(num_messages=5000, timeout=1.0)
            n = 0
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        report.error('consume error: %s' % err)
                    continue
                n += 1
                ts_type, ts = m.timestamp()
                verifier.observe(m.partition(), m.offset(), m.key(), m.value(), m.headers() or [], ts,
                                 ts_type == confluent_kafka.TIMESTAMP_CREATE_TIME)
            if n > 0:
                consumer.commit(asynchronous=False)
                commits += 1
    finally:
        consumer.close()
    verifier.finish()
    return '%d records, %d commits' % (verifier.consumed, commits)


def list_offsets(args, report):
    # A consumer that never joins its group: watermarks and offsets_for_times only.
    consumer = Consumer(consumer_conf(args, args.group + '-offsets'))
    try:
        for p in range(args.partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(args.topic, p), timeout=30, cached=False)
            if low != 0 or high != partition_count(args, p):
                report.error('watermarks partition %d: (%d, %d), expected (0, %d)' % (p, low, high, partition_count(args, p)))
        samples = timestamp_samples(args)
        queries = [(args.base_timestamp + i, lambda p, i=i: expected_offset_for_timestamp(args, i, p)) for i in samples]
        # Past the last record: no offset (-1, librdkafka's "end").
        queries.append((args.base_timestamp + args.count + 1000, lambda p: -1))
        for ts, want in queries:
            result = consumer.offsets_for_times([TopicPartition(args.topic, p, ts) for p in range(args.partitions)], timeout=30)
            for tp in result:
                if tp.error is not None:
                    report.error('offsets_for_times(%d) partition %d: %s' % (ts, tp.partition, tp.error))
                elif tp.offset != want(tp.partition):
                    report.error('offsets_for_times(%d) partition %d: offset %d, expected %d' % (ts, tp.partition, tp.offset, want(tp.partition)))
    finally:
        consumer.close()
    return 'watermarks (earliest, latest), %d timestamps + after end' % len(samples)


def group_lag(admin, args, report):
    groups = admin.list_groups(args.group, timeout=30)
    state = '?'
    if len(groups) != 1:
        report.error('list_groups(%s): %d groups' % (args.group, len(groups)))
    else:
        g = groups[0]
        state = g.state
        if g.error is not None and g.error.code() != KafkaError.NO_ERROR:
            report.error('group error %s' % g.error)
        if g.state != 'Empty' or len(g.members) != 0:
            report.error('group state %s with %d members after the consumer left, expected Empty' % (g.state, len(g.members)))
    # committed() is an OffsetFetch for this consumer's group.id; it never joins.
    consumer = Consumer(consumer_conf(args, args.group))
    total = 0
    try:
        tps = [TopicPartition(args.topic, p) for p in range(args.partitions)]
        for tp in consumer.committed(tps, timeout=30):
            _, high = consumer.get_watermark_offsets(TopicPartition(args.topic, tp.partition), timeout=30, cached=False)
            want = partition_count(args, tp.partition)
            if tp.error is not None or tp.offset != want:
                report.error('partition %d: committed %d (%s), expected %d' % (tp.partition, tp.offset, tp.error, want))
            lag = high - tp.offset
            if lag != 0:
                report.error('partition %d: lag %d, expected 0' % (tp.partition, lag))
            total += lag
    finally:
        consumer.close()
    return 'total lag %d, group %s' % (total, state)


def main():
    args = parse_args(__doc__.split('\n')[0])
    # version() is a (str, int) tuple in 1.x and a str in 2.x.
    version = confluent_kafka.version()
    version = version[0] if isinstance(version, tuple) else version
    report = Report(CLIENT, '%s (librdkafka %s)' % (version, confluent_kafka.libversion()[0]), args, True)
    admin = AdminClient({'bootstrap.servers': args.bootstrap, 'client.id': 'sediment-compat-confluent-admin'})
    report.op('createTopic', lambda: create_topic(admin, args, report))
    report.op('describeConfigs', lambda: describe_configs(admin, args, report))
    report.op('produce', lambda: produce(args, report))
    report.op('consumeGroup', lambda: consume(args, report))
    report.op('listTopics', lambda: list_topics(admin, args, report))
    report.op('regexSubscribe', lambda: regex_subscribe(admin, args, report))
    report.op('listOffsets', lambda: list_offsets(args, report))
    report.op('groupLag', lambda: group_lag(admin, args, report))
    report.finish()


if __name__ == '__main__':
    main()
