"""Compatibility-matrix program for kafka-python (PyPI), run with the venv that
test/compat/install.sh builds. Against one broker it:
  - creates the topic (KafkaAdminClient.create_topics) and describes its configs;
  - produces N keyed records with headers and CreateTime timestamps, one slice
    per codec (none, gzip, snappy, lz4, zstd), idempotent, acks=all;
  - consumes them in a consumer group (KafkaConsumer.subscribe) with a
    synchronous commit after every poll, verifying every byte and the order;
  - lists offsets: beginning_offsets, end_offsets, offsets_for_times, and the
    admin client's list_partition_offsets (earliest, latest, max timestamp,
    earliest local);
  - describes the group's lag (list_group_offsets against end offsets).
Also runs kafka-python 2.0.2 (a second venv), which predates most of that
admin API and the idempotent producer: there it creates the topic with
NewTopic objects, reads configs from the raw DescribeConfigs response, lists
offsets with the consumer only, reads the group with list_consumer_group_offsets
and describe_consumer_groups, and produces without idempotence (one request in
flight, so retries cannot reorder).
Prints one JSON summary line last (see compat_common.py).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kafka  # noqa: E402
from kafka import KafkaConsumer, KafkaProducer, TopicPartition  # noqa: E402
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient  # noqa: E402

from compat_common import (  # noqa: E402
    Report, Verifier, expected_offset_for_timestamp, parse_args, partition_count, record_headers,
    record_key, record_value, slices, timestamp_samples)

CLIENT = 'kafka-python'
# kafka-python before 2.1 has neither the idempotent producer nor the newer admin calls.
LEGACY = tuple(int(x) for x in kafka.__version__.split('.')[:2]) < (2, 1)


def create_topic(admin, args, report):
    if not LEGACY:
        admin.create_topics({args.topic: {'num_partitions': args.partitions, 'replication_factor': 1}},
                            timeout_ms=30000, wait_for_metadata=True)
        return '%d partitions' % args.partitions
    from kafka.admin import NewTopic
    admin.create_topics([NewTopic(name=args.topic, num_partitions=args.partitions, replication_factor=1)], timeout_ms=30000)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        described = admin.describe_topics([args.topic])
        parts = described[0]['partitions'] if described and described[0]['error_code'] == 0 else []
        if len(parts) == args.partitions and all(pm['leader'] >= 0 for pm in parts):
            return '%d partitions (NewTopic, then describe_topics until every partition has a leader)' % args.partitions
        time.sleep(0.1)
    report.error('no leader for every partition after 30 s')
    return ''


def describe_configs(admin, args, report):
    if LEGACY:
        # A list of DescribeConfigsResponse; resources are (error_code, error_message,
        # resource_type, resource_name, [(name, value, read_only, source, is_sensitive, ...)]).
        configs = None
        for response in admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, args.topic)]):
            for resource in response.resources:
                if resource[3] == args.topic:
                    if resource[0] != 0:
                        report.error('error %d: %s' % (resource[0], resource[1]))
                    configs = {entry[0]: {'value': entry[1]} for entry in resource[4]}
    else:
        result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, args.topic)], config_filter='all')
        # {resource type: {resource name: {key: {'value': ..., 'config_source': ...}}}}
        configs = next((by_name[args.topic] for by_name in result.values() if args.topic in by_name), None)
    if configs is None:
        report.error('no configs for %s in %r' % (args.topic, result))
        return ''
    for key, want in (('cleanup.policy', 'delete'), ('compression.type', 'producer')):
        entry = configs.get(key)
        value = entry.get('value') if isinstance(entry, dict) else entry
        if value != want:
            report.error('%s = %r, expected %r' % (key, value, want))
    retention = configs.get('retention.ms')
    return '%d entries, retention.ms=%s' % (len(configs), retention.get('value') if isinstance(retention, dict) else retention)


def produce(args, report):
    parts = []
    for codec, start, end in slices(args):
        conf = dict(
            bootstrap_servers=args.bootstrap,
            client_id='sediment-compat-kafka-python',
            compression_type=None if codec == 'none' else codec,
            acks='all',
            linger_ms=5,
            batch_size=64 * 1024,
        )
        if LEGACY:
            conf['max_in_flight_requests_per_connection'] = 1
        else:
            conf['enable_idempotence'] = True
        producer = KafkaProducer(**conf)
        futures = []
        try:
            for i in range(start, end):
                futures.append((i, producer.send(
                    args.topic, key=record_key(i).encode(), value=record_value(i).encode(),
                    headers=[(k, v.encode()) for k, v in record_headers(i, CLIENT)],
                    partition=i % args.partitions, timestamp_ms=args.base_timestamp + i)))
            producer.flush(timeout=args.timeout_ms / 1000)
            for i, f in futures:
                md = f.get(timeout=args.timeout_ms / 1000)
                if md.partition != i % args.partitions or md.offset != i // args.partitions:
                    report.error('record %d acknowledged at %d/%d, expected %d/%d'
                                 % (i, md.partition, md.offset, i % args.partitions, i // args.partitions))
        finally:
            producer.close(timeout=30)
        parts.append('%s %d' % (codec, end - start))
    return '%d records (%s)%s' % (args.count, ', '.join(parts), '' if LEGACY else ', idempotent')


def consume(args, report):
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        client_id='sediment-compat-kafka-python',
        group_id=args.group,
        auto_offset_reset='earliest',
        enable_auto_commit=False,
        fetch_max_wait_ms=500,
    )
    verifier = Verifier(args, CLIENT, report)
    commits = 0
    deadline = time.monotonic() + args.timeout_ms / 1000
    try:
        consumer.subscribe([args.topic])
        while not verifier.complete():
            if time.monotonic() > deadline:
                report.error('timed out with %d of %d records' % (verifier.consumed, args.count))
                break
            batches = consumer.poll(timeout_ms=1000, max_records=5000)
            n = 0
            for tp, records in batches.items():
                for r in records:
                    n += 1
                    verifier.observe(tp.partition, r.offset, r.key, r.value, r.headers or [], r.timestamp,
                                     r.timestamp_type == 0)
            if n > 0:
                consumer.commit()
                commits += 1
    finally:
        consumer.close()
    verifier.finish()
    return '%d records, %d commits' % (verifier.consumed, commits)


def list_offsets(admin, args, report):
    tps = [TopicPartition(args.topic, p) for p in range(args.partitions)]
    consumer = KafkaConsumer(bootstrap_servers=args.bootstrap, client_id='sediment-compat-kafka-python')
    checked = []
    try:
        def expect(what, got, want):
            for tp in tps:
                value = got.get(tp)
                offset = value if isinstance(value, int) or value is None else value.offset
                if offset != want(tp.partition):
                    report.error('%s partition %d: offset %r, expected %r' % (what, tp.partition, offset, want(tp.partition)))
            checked.append(what)

        expect('beginning_offsets', consumer.beginning_offsets(tps), lambda p: 0)
        expect('end_offsets', consumer.end_offsets(tps), lambda p: partition_count(args, p))
        for i in timestamp_samples(args):
            ts = args.base_timestamp + i
            got = consumer.offsets_for_times({tp: ts for tp in tps})
            # offsets_for_times answers None where no record has a timestamp >= ts.
            expect('offsets_for_times(%d)' % ts, got,
                   lambda p, i=i: None if expected_offset_for_timestamp(args, i, p) < 0 else expected_offset_for_timestamp(args, i, p))
        after = args.base_timestamp + args.count + 1000
        expect('offsets_for_times(after end)', consumer.offsets_for_times({tp: after for tp in tps}), lambda p: None)
    finally:
        consumer.close()
    if LEGACY:
        return 'beginning, end, %d timestamps + after end' % len(timestamp_samples(args))
    from kafka.admin import OffsetSpec
    expect_admin = [
        (OffsetSpec.EARLIEST, lambda p: 0),
        (OffsetSpec.LATEST, lambda p: partition_count(args, p)),
        (OffsetSpec.MAX_TIMESTAMP, lambda p: partition_count(args, p) - 1),
        (OffsetSpec.EARLIEST_LOCAL, lambda p: 0),
    ]
    for spec, want in expect_admin:
        got = admin.list_partition_offsets({tp: spec for tp in tps})
        for tp in tps:
            value = got.get(tp)
            if value is None or value.offset != want(tp.partition):
                report.error('list_partition_offsets(%s) partition %d: %r, expected offset %d' % (spec.name, tp.partition, value, want(tp.partition)))
        checked.append(spec.name)
    return 'beginning, end, %d timestamps + after end; admin %s' % (
        len(timestamp_samples(args)), ', '.join(s.name for s, _ in expect_admin))


def group_lag(admin, args, report):
    tps = [TopicPartition(args.topic, p) for p in range(args.partitions)]
    if LEGACY:
        committed = admin.list_consumer_group_offsets(args.group)
        consumer = KafkaConsumer(bootstrap_servers=args.bootstrap, client_id='sediment-compat-kafka-python')
        try:
            latest = {tp: type('End', (), {'offset': end})() for tp, end in consumer.end_offsets(tps).items()}
        finally:
            consumer.close()
    else:
        from kafka.admin import OffsetSpec
        committed = admin.list_group_offsets({args.group: None}).get(args.group, {})
        latest = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps})
    total = 0
    for tp in tps:
        c = committed.get(tp)
        end = latest.get(tp)
        if c is None or end is None:
            report.error('partition %d: committed %r, latest %r' % (tp.partition, c, end))
            continue
        if c.offset != partition_count(args, tp.partition):
            report.error('partition %d: committed %d, expected %d' % (tp.partition, c.offset, partition_count(args, tp.partition)))
        lag = end.offset - c.offset
        if lag != 0:
            report.error('partition %d: lag %d, expected 0' % (tp.partition, lag))
        total += lag
    if LEGACY:
        info = admin.describe_consumer_groups([args.group])
        state = info[0].state if info else '?'
    else:
        described = admin.describe_groups([args.group]).get(args.group, {})
        state = described.get('group_state', described.get('state', '?'))
    if state != 'Empty':
        report.error('group state %r after the consumer left, expected Empty' % state)
    return 'total lag %d over %d partitions, group %s' % (total, len(committed), state)


def main():
    args = parse_args(__doc__.split('\n')[0])
    report = Report(CLIENT, kafka.__version__, args, not LEGACY)
    admin = KafkaAdminClient(bootstrap_servers=args.bootstrap, client_id='sediment-compat-kafka-python-admin')
    try:
        report.op('createTopic', lambda: create_topic(admin, args, report))
        report.op('describeConfigs', lambda: describe_configs(admin, args, report))
        report.op('produce', lambda: produce(args, report))
        report.op('consumeGroup', lambda: consume(args, report))
        report.op('listOffsets', lambda: list_offsets(admin, args, report))
        report.op('groupLag', lambda: group_lag(admin, args, report))
    finally:
        admin.close()
    report.finish()


if __name__ == '__main__':
    main()
