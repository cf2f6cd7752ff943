// Compatibility-matrix program for the Java client (kafka-clients 4.x), compiled
// with javac at test time (test/compat/clients/java.ts). Against one broker it:
//   - creates the topic (Admin.createTopics), describes it (describeTopics) and
//     its configs (describeConfigs);
//   - produces N keyed records with headers and CreateTime timestamps, one
//     contiguous slice per codec (none, gzip, snappy, lz4, zstd), each slice with
//     its own idempotent producer, acks=all;
//   - consumes them in a consumer group with a synchronous commit after every
//     poll, verifying every key, value, header, timestamp and the per-partition order;
//   - lists offsets: earliest, latest, by timestamp, max timestamp, and Kafka 4.x's
//     earliestLocal() and latestTiered();
//   - describes the group's lag (listConsumerGroupOffsets against latest offsets,
//     describeConsumerGroups, listGroups) and reads the same offsets through the
//     consumer API (beginningOffsets, endOffsets, offsetsForTimes, committed);
//   - describes the cluster (describeCluster, broker describeConfigs).
// Content rules are test/clients/content.ts's (record i: partition i % P, key
// "k-<i>", value "v-<i>-"+filler, headers idx, src, and empty every 5th, CreateTime
// base + i). Prints one JSON summary line last; exit code 0 only when all passed.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class CompatClient {
    static final String CLIENT = "java";
    static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
    static final int MAX_ERRORS = 20;

    // ---- options -------------------------------------------------------------
    String bootstrap;
    String topic;
    String group;
    int count = 50_000;
    int partitions = 3;
    long baseTimestamp;
    List<String> codecs = List.of("none", "gzip", "snappy", "lz4", "zstd");
    long timeoutMs = 240_000;

    // ---- report --------------------------------------------------------------
    /** One operation of the matrix: name -> [ok, detail]. */
    final Map<String, Object[]> operations = new LinkedHashMap<>();
    final List<String> notes = new ArrayList<>();
    final Map<String, Long> timings = new LinkedHashMap<>();
    int errorCount = 0;
    final List<String> errors = new ArrayList<>();
    String currentOp = "setup";
    int opErrors = 0;

    void error(String msg) {
        errorCount++;
        opErrors++;
        if (errors.size() < MAX_ERRORS) errors.add(currentOp + ": " + msg);
    }

    interface Step {
        String run() throws Exception;
    }

    /** Runs one matrix operation; it passes when it throws nothing and reports no error. */
    void op(String name, Step step) {
        currentOp = name;
        opErrors = 0;
        long t0 = System.nanoTime();
        String detail;
        try {
            detail = step.run();
        } catch (Exception e) {
            Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            error(c.getClass().getSimpleName() + ": " + c.getMessage());
            detail = c.getClass().getSimpleName() + ": " + c.getMessage();
        }
        timings.put(name, (System.nanoTime() - t0) / 1_000_000);
        operations.put(name, new Object[] {opErrors == 0, detail == null ? "" : detail});
    }

    // ---- content (test/clients/content.ts) ------------------------------------
    static String key(int i) {
        return "k-" + i;
    }

    static String value(int i) {
        int length = (int) (((long) i * 7919) % 97) + (i % 1000 == 0 ? 10_000 : 0);
        StringBuilder sb = new StringBuilder(length + 16).append("v-").append(i).append('-');
        for (int j = 0; j < length; j++) sb.append(ALPHABET.charAt((int) ((i + (long) j * 31) % 36)));
        return sb.toString();
    }

    static List<String[]> headers(int i) {
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {"idx", Integer.toString(i)});
        h.add(new String[] {"src", CLIENT});
        if (i % 5 == 0) h.add(new String[] {"empty", ""});
        return h;
    }

    int partitionCount(int p) {
        return p >= count ? 0 : (count - p + partitions - 1) / partitions;
    }

    /** First record j >= i of partition p, at offset j / P; -1 when there is none. */
    long expectedOffsetForTimestamp(int i, int p) {
        int j = i + Math.floorMod(p - i, partitions);
        return j < count ? j / partitions : -1;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    // ---- steps -----------------------------------------------------------------
    Properties common() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "sediment-compat-java");
        return p;
    }

    String createTopic(Admin admin) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
        return partitions + " partitions";
    }

    String describeTopic(Admin admin) throws Exception {
        long deadline = System.currentTimeMillis() + 30_000;
        for (;;) {
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
            boolean ready = d != null && d.partitions().size() == partitions
                && d.partitions().stream().allMatch(pi -> pi.leader() != null && !pi.leader().isEmpty());
            if (ready) {
                for (TopicPartitionInfo pi : d.partitions()) {
                    if (pi.replicas().size() != 1 || pi.isr().size() != 1) error("partition " + pi.partition() + ": replicas " + pi.replicas() + ", isr " + pi.isr());
                }
                if (d.topicId() == null || d.topicId().toString().equals("AAAAAAAAAAAAAAAAAAAAAA")) error("no topic id");
                if (d.isInternal()) error("topic reported internal");
                return d.partitions().size() + " partitions, leader " + d.partitions().get(0).leader().id() + ", topic id " + d.topicId();
            }
            if (System.currentTimeMillis() > deadline) {
                error("no leader for every partition after 30 s: " + d);
                return "";
            }
            Thread.sleep(100);
        }
    }

    String describeConfigs(Admin admin) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(res)).all().get(30, TimeUnit.SECONDS).get(res);
        if (config == null) {
            error("no config for " + topic);
            return "";
        }
        Map<String, String> want = Map.of("cleanup.policy", "delete", "compression.type", "producer");
        for (Map.Entry<String, String> w : want.entrySet()) {
            ConfigEntry e = config.get(w.getKey());
            if (e == null) error("no entry " + w.getKey());
            else if (!w.getValue().equals(e.value())) error(w.getKey() + " = " + e.value() + ", expected " + w.getValue());
        }
        for (String name : List.of("retention.ms", "segment.bytes", "max.message.bytes", "message.timestamp.type")) {
            if (config.get(name) == null) error("no entry " + name);
        }
        ConfigEntry retention = config.get("retention.ms");
        return config.entries().size() + " entries, retention.ms=" + (retention == null ? "?" : retention.value() + " (" + retention.source() + ")");
    }

    String produce() throws Exception {
        int slices = codecs.size();
        List<String> parts = new ArrayList<>();
        for (int s = 0; s < slices; s++) {
            String codec = codecs.get(s);
            int from = (int) ((long) count * s / slices);
            int to = (int) ((long) count * (s + 1) / slices);
            Properties p = common();
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
            p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            // enable.idempotence is left at its default (true) on purpose.
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                List<Future<RecordMetadata>> acks = new ArrayList<>(to - from);
                for (int i = from; i < to; i++) {
                    List<Header> hs = new ArrayList<>();
                    for (String[] h : headers(i)) hs.add(new RecordHeader(h[0], utf8(h[1])));
                    acks.add(producer.send(new ProducerRecord<>(topic, i % partitions, baseTimestamp + i, utf8(key(i)), utf8(value(i)), hs)));
                }
                producer.flush();
                for (int i = from; i < to; i++) {
                    RecordMetadata md = acks.get(i - from).get();
                    if (md.partition() != i % partitions || md.offset() != i / partitions) {
                        error("record " + i + " acknowledged at " + md.partition() + "/" + md.offset() + ", expected " + (i % partitions) + "/" + (i / partitions));
                    }
                }
            }
            parts.add(codec + " " + (to - from));
        }
        return count + " records (" + String.join(", ", parts) + "), idempotent";
    }

    String consume() throws Exception {
        Properties p = common();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        byte[] seen = new byte[count];
        long[] next = new long[partitions];
        int consumed = 0;
        int duplicates = 0;
        int commits = 0;
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            while (!complete(next)) {
                if (System.currentTimeMillis() > deadline) {
                    error("timed out with " + consumed + " of " + count + " records");
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    consumed++;
                    if (!verify(r, seen, next)) duplicates++;
                }
                if (!records.isEmpty()) {
                    consumer.commitSync();
                    commits++;
                }
            }
        }
        for (int q = 0; q < partitions; q++) {
            if (next[q] != partitionCount(q)) error("partition " + q + " ended at offset " + next[q] + ", expected " + partitionCount(q));
        }
        int missing = 0;
        for (byte b : seen) if (b == 0) missing++;
        if (missing > 0) error(missing + " records missing");
        if (duplicates > 0) error(duplicates + " duplicates");
        return consumed + " records, " + commits + " commits";
    }

    boolean complete(long[] next) {
        for (int q = 0; q < partitions; q++) if (next[q] < partitionCount(q)) return false;
        return true;
    }

    /** Checks one record; false when it is a duplicate. */
    boolean verify(ConsumerRecord<byte[], byte[]> r, byte[] seen, long[] next) {
        String where = "partition " + r.partition() + " offset " + r.offset();
        int q = r.partition();
        if (q < 0 || q >= partitions) {
            error(where + ": unexpected partition");
            return true;
        }
        if (r.offset() != next[q]) error(where + ": expected offset " + next[q] + " next (gap or reorder)");
        next[q] = r.offset() + 1;
        String k = str(r.key());
        int i = -1;
        if (k != null && k.startsWith("k-")) {
            try {
                i = Integer.parseInt(k.substring(2));
            } catch (NumberFormatException e) {
                i = -1;
            }
        }
        if (i < 0 || i >= count) {
            error(where + ": unexpected key " + k);
            return true;
        }
        if (seen[i] != 0) {
            error(where + ": duplicate of record " + i);
            return false;
        }
        seen[i] = 1;
        long expectedIndex = q + r.offset() * partitions;
        if (i != expectedIndex) error(where + ": holds record " + i + ", expected record " + expectedIndex);
        if (!Arrays.equals(r.value(), utf8(value(i)))) error(where + ": value of record " + i + " differs");
        List<String[]> want = headers(i);
        Header[] got = r.headers().toArray();
        boolean same = got.length == want.size();
        for (int h = 0; same && h < got.length; h++) {
            same = got[h].key().equals(want.get(h)[0]) && Arrays.equals(got[h].value(), utf8(want.get(h)[1]));
        }
        if (!same) error(where + ": headers of record " + i + " differ (" + got.length + " headers)");
        if (r.timestampType() != TimestampType.CREATE_TIME || r.timestamp() != baseTimestamp + i) {
            error(where + ": timestamp " + r.timestampType() + " " + r.timestamp() + ", expected CreateTime " + (baseTimestamp + i));
        }
        return true;
    }

    Map<TopicPartition, ListOffsetsResultInfo> listOffsets(Admin admin, OffsetSpec spec) throws Exception {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        for (int p = 0; p < partitions; p++) q.put(new TopicPartition(topic, p), spec);
        return admin.listOffsets(q).all().get(30, TimeUnit.SECONDS);
    }

    void expectOffsets(String what, Map<TopicPartition, ListOffsetsResultInfo> got, java.util.function.IntToLongFunction want) {
        for (int p = 0; p < partitions; p++) {
            ListOffsetsResultInfo info = got.get(new TopicPartition(topic, p));
            long w = want.applyAsLong(p);
            if (info == null) error(what + " partition " + p + ": no answer");
            else if (info.offset() != w) error(what + " partition " + p + ": offset " + info.offset() + ", expected " + w);
        }
    }

    String listOffsets(Admin admin) throws Exception {
        expectOffsets("earliest", listOffsets(admin, OffsetSpec.earliest()), p -> 0);
        expectOffsets("latest", listOffsets(admin, OffsetSpec.latest()), this::partitionCount);
        TreeSet<Integer> samples = new TreeSet<>(List.of(0, 1, count / 3, count / 2, count - 1));
        int checked = 0;
        for (int i : samples) {
            if (i < 0 || i >= count) continue;
            final int idx = i;
            expectOffsets("forTimestamp(" + (baseTimestamp + i) + ")", listOffsets(admin, OffsetSpec.forTimestamp(baseTimestamp + i)), p -> expectedOffsetForTimestamp(idx, p));
            checked++;
        }
        // Past the last record: no offset (-1).
        expectOffsets("forTimestamp(after end)", listOffsets(admin, OffsetSpec.forTimestamp(baseTimestamp + count + 1000)), p -> -1);
        Map<TopicPartition, ListOffsetsResultInfo> max = listOffsets(admin, OffsetSpec.maxTimestamp());
        expectOffsets("maxTimestamp", max, p -> partitionCount(p) - 1);
        for (int p = 0; p < partitions; p++) {
            ListOffsetsResultInfo info = max.get(new TopicPartition(topic, p));
            long lastIndex = p + (long) (partitionCount(p) - 1) * partitions;
            if (info != null && info.timestamp() != baseTimestamp + lastIndex) error("maxTimestamp partition " + p + ": timestamp " + info.timestamp() + ", expected " + (baseTimestamp + lastIndex));
        }
        return "earliest, latest, " + checked + " timestamps + after end, maxTimestamp";
    }

    String listTieredOffsets(Admin admin) throws Exception {
        // Without remote storage the local log starts at the log start offset, and
        // nothing is tiered: Kafka answers offset -1 for latestTiered().
        expectOffsets("earliestLocal", listOffsets(admin, OffsetSpec.earliestLocal()), p -> 0);
        expectOffsets("latestTiered", listOffsets(admin, OffsetSpec.latestTiered()), p -> -1);
        return "earliestLocal 0, latestTiered -1 (no tiering on this topic)";
    }

    String groupLag(Admin admin) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        Map<TopicPartition, ListOffsetsResultInfo> latest = listOffsets(admin, OffsetSpec.latest());
        long total = 0;
        for (int p = 0; p < partitions; p++) {
            TopicPartition tp = new TopicPartition(topic, p);
            OffsetAndMetadata c = committed.get(tp);
            ListOffsetsResultInfo end = latest.get(tp);
            if (c == null || end == null) {
                error("partition " + p + ": committed " + c + ", latest " + end);
                continue;
            }
            if (c.offset() != partitionCount(p)) error("partition " + p + ": committed " + c.offset() + ", expected " + partitionCount(p));
            long lag = end.offset() - c.offset();
            if (lag != 0) error("partition " + p + ": lag " + lag + ", expected 0");
            total += lag;
        }
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group);
        String state = d == null ? "?" : d.groupState().toString();
        if (d == null || !d.members().isEmpty()) error("group after the consumer closed: " + d);
        return "total lag " + total + " over " + committed.size() + " partitions, group " + state;
    }

    String consumerOffsets() throws Exception {
        Properties p = common();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<TopicPartition> tps = new ArrayList<>();
        for (int q = 0; q < partitions; q++) tps.add(new TopicPartition(topic, q));
        // Never subscribes: the offset look-ups and committed() need no membership.
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps, Duration.ofSeconds(30));
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(tps), Duration.ofSeconds(30));
            int mid = count / 2;
            Map<TopicPartition, Long> query = new HashMap<>();
            for (TopicPartition tp : tps) query.put(tp, baseTimestamp + mid);
            Map<TopicPartition, OffsetAndTimestamp> byTime = consumer.offsetsForTimes(query, Duration.ofSeconds(30));
            for (TopicPartition tp : tps) {
                int q = tp.partition();
                if (begin.get(tp) == null || begin.get(tp) != 0) error("beginningOffsets " + q + ": " + begin.get(tp));
                if (end.get(tp) == null || end.get(tp) != partitionCount(q)) error("endOffsets " + q + ": " + end.get(tp) + ", expected " + partitionCount(q));
                OffsetAndMetadata c = committed.get(tp);
                if (c == null || c.offset() != partitionCount(q)) error("committed " + q + ": " + c + ", expected " + partitionCount(q));
                OffsetAndTimestamp t = byTime.get(tp);
                long want = expectedOffsetForTimestamp(mid, q);
                if (t == null || t.offset() != want) error("offsetsForTimes(" + (baseTimestamp + mid) + ") " + q + ": " + t + ", expected " + want);
                else if (t.timestamp() != baseTimestamp + q + t.offset() * partitions) error("offsetsForTimes " + q + ": timestamp " + t.timestamp());
            }
        }
        return "consumer beginningOffsets, endOffsets, committed, offsetsForTimes";
    }

    String describeCluster(Admin admin) throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        String clusterId = r.clusterId().get(30, TimeUnit.SECONDS);
        Collection<Node> nodes = r.nodes().get(30, TimeUnit.SECONDS);
        Node controller = r.controller().get(30, TimeUnit.SECONDS);
        if (clusterId == null || clusterId.isEmpty()) error("no cluster id");
        if (nodes.isEmpty()) error("no nodes");
        if (controller == null || controller.isEmpty()) error("no controller");
        // One broker, or a cluster: the bootstrap broker is one of the nodes listed.
        Node node = nodes.stream().filter(n -> bootstrap.equals(n.host() + ":" + n.port())).findFirst().orElse(null);
        if (node == null) {
            error("no node is at " + bootstrap + ": " + nodes);
            node = nodes.iterator().next();
        }
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(node.id()));
        Config config = admin.describeConfigs(List.of(broker)).all().get(30, TimeUnit.SECONDS).get(broker);
        for (String name : List.of("log.retention.hours", "num.partitions", "message.max.bytes", "auto.create.topics.enable")) {
            if (config == null || config.get(name) == null) error("broker config has no " + name);
        }
        return "1 node, controller " + (controller == null ? "?" : controller.id()) + ", broker configs: " + (config == null ? 0 : config.entries().size()) + " entries";
    }

    String listGroups(Admin admin) throws Exception {
        Collection<GroupListing> groups = admin.listGroups().all().get(30, TimeUnit.SECONDS);
        GroupListing mine = groups.stream().filter(g -> g.groupId().equals(group)).findFirst().orElse(null);
        if (mine == null) error("group " + group + " not listed among " + groups.size());
        else if (!mine.protocol().equals("consumer")) error("group protocol type " + mine.protocol());
        return groups.size() + " groups listed, " + group + (mine == null ? " missing" : " " + mine.groupState().map(Object::toString).orElse("?"));
    }

    // ---- main ------------------------------------------------------------------
    void run() {
        Properties ap = common();
        ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000);
        try (Admin admin = Admin.create(ap)) {
            op("createTopic", () -> createTopic(admin));
            op("describeTopics", () -> describeTopic(admin));
            op("describeConfigs", () -> describeConfigs(admin));
            op("produce", this::produce);
            op("consumeGroup", this::consume);
            op("listOffsets", () -> listOffsets(admin));
            op("listOffsetsTiered", () -> listTieredOffsets(admin));
            op("groupLag", () -> groupLag(admin));
            op("consumerOffsets", this::consumerOffsets);
            op("listGroups", () -> listGroups(admin));
            op("describeCluster", () -> describeCluster(admin));
        }
    }

    static String json(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }

    String summary() {
        StringBuilder sb = new StringBuilder("{");
        sb.append("\"client\":").append(json(CLIENT));
        sb.append(",\"clientVersion\":").append(json(clientVersion()));
        sb.append(",\"ok\":").append(errorCount == 0);
        sb.append(",\"codecs\":[");
        for (int c = 0; c < codecs.size(); c++) sb.append(c == 0 ? "" : ",").append(json(codecs.get(c)));
        sb.append("],\"idempotent\":true,\"count\":").append(count);
        sb.append(",\"operations\":[");
        boolean first = true;
        for (Map.Entry<String, Object[]> e : operations.entrySet()) {
            sb.append(first ? "" : ",").append("{\"name\":").append(json(e.getKey()))
                .append(",\"ok\":").append(e.getValue()[0])
                .append(",\"detail\":").append(json((String) e.getValue()[1]))
                .append(",\"ms\":").append(timings.get(e.getKey())).append('}');
            first = false;
        }
        sb.append("],\"notes\":[");
        for (int n = 0; n < notes.size(); n++) sb.append(n == 0 ? "" : ",").append(json(notes.get(n)));
        sb.append("],\"errorCount\":").append(errorCount).append(",\"errors\":[");
        for (int n = 0; n < errors.size(); n++) sb.append(n == 0 ? "" : ",").append(json(errors.get(n)));
        return sb.append("]}").toString();
    }

    public static void main(String[] args) {
        CompatClient c = new CompatClient();
        c.baseTimestamp = (System.currentTimeMillis() / 1000) * 1000 - 3_600_000;
        for (int a = 0; a + 1 < args.length; a += 2) {
            String v = args[a + 1];
            switch (args[a]) {
                case "--bootstrap" -> c.bootstrap = v;
                case "--topic" -> c.topic = v;
                case "--group" -> c.group = v;
                case "--count" -> c.count = Integer.parseInt(v);
                case "--partitions" -> c.partitions = Integer.parseInt(v);
                case "--base-timestamp" -> c.baseTimestamp = Long.parseLong(v);
                case "--codecs" -> c.codecs = Arrays.asList(v.split(","));
                case "--timeout-ms" -> c.timeoutMs = Long.parseLong(v);
                default -> throw new IllegalArgumentException("unknown option " + args[a]);
            }
        }
        if (c.bootstrap == null || c.topic == null || c.group == null) throw new IllegalArgumentException("--bootstrap, --topic and --group are required");
        try {
            c.run();
        } catch (Exception e) {
            c.currentOp = "run";
            c.error(e.toString());
        }
        System.out.println(c.summary());
        System.out.flush();
        System.exit(c.errorCount == 0 ? 0 : 1);
    }

    /**
     * The kafka-clients release on the classpath, from the version file every release's jar
     * carries (AppInfoParser, which reads it, moved to an internals package in 4.4).
     */
    static String clientVersion() {
        Properties p = new Properties();
        try (java.io.InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in != null) p.load(in);
        } catch (java.io.IOException e) {
            return "unknown";
        }
        return p.getProperty("version", "unknown");
    }
}
