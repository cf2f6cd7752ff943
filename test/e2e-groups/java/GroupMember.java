// A Java consumer (kafka-clients, classic group protocol) with
// CooperativeStickyAssignor, static (group.instance.id) or dynamic, for the
// consumer-group end-to-end suite. Compiled by the test with javac against the
// reference Kafka jars; run as
//   java -cp <dir>:<kafka libs>/* GroupMember <bootstrap> <topic> <group> <instanceId|-> <sessionTimeoutMs> [classic|consumer [assignor]]
// With "consumer" (KIP-848) the session timeout and heartbeat interval are the
// broker's (group.consumer.*) and the assignor a server-side one
// (group.remote.assignor, default: the broker's).
// stdout, one JSON object a line:
//   {"ev":"assigned"|"revoked"|"lost","gen":G,"memberId":"...","partitions":[...],"t":"<System.nanoTime()>"}
//   {"ev":"rec","p":0,"o":12,"v":"..."}            (before its offset is committed)
//   {"ev":"commit","gen":G,"offsets":{"0":13,...}}  (after commitSync returned)
//   {"ev":"commit-failed","error":"..."}  (refused during a rebalance; retried while the partition stays owned)
//   {"ev":"status","gen":G,"memberId":"...","partitions":[...]}  (about every 500 ms)
//   {"ev":"closed"}  {"ev":"error","error":"..."}
// A line "stop" on stdin closes the consumer (a static member sends no
// LeaveGroup on close, so the coordinator keeps its place) and exits 0.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class GroupMember {
  private static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
  private static volatile boolean stopping = false;

  private static synchronized void emit(String json) {
    OUT.println(json);
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  private static String partitions(Collection<TopicPartition> tps) {
    List<Integer> ps = new ArrayList<>();
    for (TopicPartition tp : tps) ps.add(tp.partition());
    Collections.sort(ps);
    return ps.toString().replace(" ", "");
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 5) {
      System.err.println("usage: GroupMember <bootstrap> <topic> <group> <instanceId|-> <sessionTimeoutMs>");
      System.exit(2);
    }
    String bootstrap = args[0];
    String topic = args[1];
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", args[2]);
    boolean isStatic = !args[3].equals("-");
    if (isStatic) props.put("group.instance.id", args[3]);
    props.put("client.id", isStatic ? "static-" + args[3] : "dynamic-member");
    String protocol = args.length > 5 ? args[5] : "classic";
    props.put("group.protocol", protocol);
    if (protocol.equals("classic")) {
      props.put("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
      props.put("session.timeout.ms", args[4]);
      props.put("heartbeat.interval.ms", "500");
    } else if (args.length > 6) {
      props.put("group.remote.assignor", args[6]);
    }
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", "earliest");
    props.put("max.poll.records", "200");
    props.put("fetch.max.wait.ms", "200");
    // Partitions added to the topic are noticed within a second or two (then the client rejoins).
    props.put("metadata.max.age.ms", "1000");
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());

    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
    // Offsets processed but not yet committed (kept across a refused commit while the partition stays owned).
    TreeMap<TopicPartition, OffsetAndMetadata> pending = new TreeMap<>((a, b) -> Integer.compare(a.partition(), b.partition()));
    Thread stdin = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.trim().equals("stop")) break;
        }
      } catch (Exception e) {
        // stdin closed: stop as well
      }
      stopping = true;
      consumer.wakeup();
    });
    stdin.setDaemon(true);
    stdin.start();

    consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
      private void event(String ev, Collection<TopicPartition> tps) {
        if (!ev.equals("assigned")) pending.keySet().removeAll(tps);
        emit("{\"ev\":\"" + ev + "\",\"gen\":" + consumer.groupMetadata().generationId() + ",\"memberId\":" + quote(consumer.groupMetadata().memberId()) + ",\"partitions\":" + partitions(tps) + ",\"t\":\"" + System.nanoTime() + "\"}");
      }
      @Override public void onPartitionsAssigned(Collection<TopicPartition> tps) { event("assigned", tps); }
      @Override public void onPartitionsRevoked(Collection<TopicPartition> tps) { event("revoked", tps); }
      @Override public void onPartitionsLost(Collection<TopicPartition> tps) { event("lost", tps); }
    });

    long lastStatus = 0;
    try {
      while (!stopping) {
        ConsumerRecords<String, String> records;
        try {
          records = consumer.poll(Duration.ofMillis(200));
        } catch (WakeupException e) {
          break;
        }
        for (ConsumerRecord<String, String> rec : records) {
          emit("{\"ev\":\"rec\",\"p\":" + rec.partition() + ",\"o\":" + rec.offset() + ",\"v\":" + quote(rec.value() == null ? "" : rec.value()) + "}");
          pending.put(new TopicPartition(rec.topic(), rec.partition()), new OffsetAndMetadata(rec.offset() + 1));
        }
        if (!pending.isEmpty()) {
          Map<TopicPartition, OffsetAndMetadata> next = new TreeMap<>(pending.comparator());
          next.putAll(pending);
          try {
            consumer.commitSync(next);
            StringBuilder b = new StringBuilder();
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : next.entrySet()) {
              if (b.length() > 0) b.append(',');
              b.append('"').append(e.getKey().partition()).append("\":").append(e.getValue().offset());
              if (pending.get(e.getKey()) == e.getValue()) pending.remove(e.getKey());
            }
            emit("{\"ev\":\"commit\",\"gen\":" + consumer.groupMetadata().generationId() + ",\"offsets\":{" + b + "}}");
          } catch (RebalanceInProgressException | CommitFailedException e) {
            emit("{\"ev\":\"commit-failed\",\"error\":" + quote(e.toString()) + "}");
          } catch (WakeupException e) {
            break;
          } catch (org.apache.kafka.common.errors.StaleMemberEpochException | org.apache.kafka.common.errors.UnknownMemberIdException e) {
            // The consumer protocol's refusals of a commit from a member that moved on; retried while owned.
            emit("{\"ev\":\"commit-failed\",\"error\":" + quote(e.toString()) + "}");
          }
        }
        long now = System.currentTimeMillis();
        if (now - lastStatus >= 500) {
          lastStatus = now;
          emit("{\"ev\":\"status\",\"gen\":" + consumer.groupMetadata().generationId() + ",\"memberId\":" + quote(consumer.groupMetadata().memberId()) + ",\"partitions\":" + partitions(consumer.assignment()) + "}");
        }
      }
    } catch (Exception e) {
      emit("{\"ev\":\"error\",\"error\":" + quote(e.toString()) + "}");
      consumer.close();
      System.exit(1);
    }
    consumer.close();
    emit("{\"ev\":\"closed\"}");
    System.exit(0);
  }
}
