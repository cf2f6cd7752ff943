#!/usr/bin/python3
"""One confluent-kafka-python (librdkafka) group member for the consumer-group
end-to-end suite.

    group_consumer.py --bootstrap H:P --topic T --group G [--instance-id I]

stdout, one JSON object a line:
    {"ev": "assigned"|"revoked"|"lost", "partitions": [...]}
    {"ev": "rec", "p": 0, "o": 12, "v": "..."}     (before its offset is committed)
    {"ev": "commit", "offsets": {"0": 13}}         (after a synchronous commit)
    {"ev": "closed"} / {"ev": "error", "error": "..."}
A line "stop" on stdin closes the consumer (a static member sends no
LeaveGroup) and exits 0.
"""
import argparse
import json
import sys
import threading

from confluent_kafka import Consumer, KafkaError, KafkaException


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--instance-id")
    ap.add_argument("--session-timeout-ms", type=int, default=10000)
    a = ap.parse_args()

    conf = {
        "bootstrap.servers": a.bootstrap,
        "group.id": a.group,
        "client.id": "py-" + (a.instance_id or "dynamic"),
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": a.session_timeout_ms,
        "heartbeat.interval.ms": 500,
        "fetch.wait.max.ms": 200,
        "error_cb": lambda err: emit({"ev": "client-error", "error": str(err)}),
    }
    if a.instance_id:
        conf["group.instance.id"] = a.instance_id
    consumer = Consumer(conf)
    stop = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        stop.set()

    threading.Thread(target=read_stdin, daemon=True).start()

    def parts(ps):
        return sorted(p.partition for p in ps)

    consumer.subscribe(
        [a.topic],
        on_assign=lambda c, ps: emit({"ev": "assigned", "partitions": parts(ps)}),
        on_revoke=lambda c, ps: emit({"ev": "revoked", "partitions": parts(ps)}),
        on_lost=lambda c, ps: emit({"ev": "lost", "partitions": parts(ps)}),
    )
    try:
        while not stop.is_set():
            msgs = consumer.consume(num_messages=500, timeout=0.2)
            nxt = {}
            for m in msgs:
                if m.error() is not None:
                    if m.error().code() != KafkaError._PARTITION_EOF:
                        emit({"ev": "client-error", "error": str(m.error())})
                    continue
                v = m.value()
                emit({"ev": "rec", "p": m.partition(), "o": m.offset(), "v": v.decode("utf-8") if v is not None else None})
                nxt[m.partition()] = m.offset() + 1
            if nxt:
                try:
                    consumer.commit(asynchronous=False)
                    emit({"ev": "commit", "offsets": {str(p): o for p, o in sorted(nxt.items())}})
                except KafkaException as e:
                    # Refused during a rebalance: the next owner re-reads those records.
                    emit({"ev": "commit-failed", "error": str(e)})
        consumer.close()
        emit({"ev": "closed"})
    except Exception as e:  # noqa: BLE001 - reported to the test, then a non-zero exit
        emit({"ev": "error", "error": repr(e)})
        sys.exit(1)


if __name__ == "__main__":
    main()
