// A Java share consumer (KafkaShareConsumer, KIP-932) for the share-group
// end-to-end suite. Compiled by the test with javac against the reference
// Kafka jars; run as
//   java -cp <dir>:<kafka libs>/* ShareMember <bootstrap> <group> <topic> <implicit|explicit> <hold|-> <k=v,...|->
// The last argument sets group configs first (Admin.incrementalAlterConfigs on
// the GROUP resource, e.g. share.auto.offset.reset=earliest).
// In explicit mode each record is acknowledged by its value's prefix:
//   "release-"  RELEASE at its first delivery, ACCEPT afterwards
//   "reject-"   REJECT
//   "poison-"   RELEASE every time (archived at the delivery count limit)
//   otherwise   ACCEPT
// and commitSync() follows every poll. Implicit mode accepts everything the
// next poll. <hold> = "hold" stops polling after the first non-empty poll (the
// acquisition locks then expire: the member stays in the group through the
// background heartbeat thread); "-" polls on.
// stdout, one JSON object a line:
//   {"ev":"rec","p":0,"o":12,"v":"...","dc":1}   (a record delivered, before its acknowledgement)
//   {"ev":"ack","p":0,"o":12,"type":"ACCEPT"}     (explicit mode, after commitSync returned it)
//   {"ev":"polled","n":N}  {"ev":"idle"} (an empty poll)  {"ev":"closed"}  {"ev":"error","error":"..."}
// A line "stop" on stdin closes the consumer (which acknowledges what is pending) and exits 0.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.ArrayList;
import java.util.Collection;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class ShareMember {
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

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String group = args[1];
    String topic = args[2];
    boolean explicit = args[3].equals("explicit");
    boolean hold = args[4].equals("hold");
    if (!args[5].equals("-")) {
      Properties ap = new Properties();
      ap.put("bootstrap.servers", bootstrap);
      try (Admin admin = Admin.create(ap)) {
        Collection<AlterConfigOp> ops = new ArrayList<>();
        for (String kv : args[5].split(",")) {
          String[] p = kv.split("=", 2);
          ops.add(new AlterConfigOp(new ConfigEntry(p[0], p[1]), AlterConfigOp.OpType.SET));
        }
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
      }
      emit("{\"ev\":\"configured\"}");
    }
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("client.id", "share-member-" + ProcessHandle.current().pid());
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
    props.put("max.poll.records", "50");
    KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props);
    Thread stdin = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          if (line.trim().equals("stop")) break;
        }
      } catch (Exception ignored) {
        // stdin closed
      }
      // No wakeup(): a pending wakeup would make close() throw; polls are short and check the flag.
      stopping = true;
    });
    stdin.setDaemon(true);
    stdin.start();
    if (explicit) {
      consumer.setAcknowledgementCommitCallback((Map<TopicIdPartition, Set<Long>> offsets, Exception e) -> {
        if (e != null) emit("{\"ev\":\"ack-error\",\"error\":" + quote(e.toString()) + "}");
      });
    }
    try {
      consumer.subscribe(List.of(topic));
      boolean held = false;
      while (!stopping) {
        if (held) {
          Thread.sleep(100);
          continue;
        }
        ConsumerRecords<String, String> records;
        try {
          records = consumer.poll(Duration.ofMillis(500));
        } catch (WakeupException e) {
          break;
        }
        emit(records.count() > 0 ? "{\"ev\":\"polled\",\"n\":" + records.count() + "}" : "{\"ev\":\"idle\"}");
        StringBuilder acks = new StringBuilder();
        for (ConsumerRecord<String, String> rec : records) {
          Optional<Short> dc = rec.deliveryCount();
          int count = dc.isPresent() ? dc.get() : -1;
          emit("{\"ev\":\"rec\",\"p\":" + rec.partition() + ",\"o\":" + rec.offset() + ",\"v\":" + quote(rec.value()) + ",\"dc\":" + count + "}");
          if (!explicit || hold) continue;
          String v = rec.value();
          AcknowledgeType type;
          if (v.startsWith("release-")) type = count <= 1 ? AcknowledgeType.RELEASE : AcknowledgeType.ACCEPT;
          else if (v.startsWith("reject-")) type = AcknowledgeType.REJECT;
          else if (v.startsWith("poison-")) type = AcknowledgeType.RELEASE;
          else type = AcknowledgeType.ACCEPT;
          consumer.acknowledge(rec, type);
          acks.append("{\"ev\":\"ack\",\"p\":").append(rec.partition()).append(",\"o\":").append(rec.offset()).append(",\"type\":\"").append(type).append("\"}\n");
        }
        if (hold && records.count() > 0) {
          held = true;
          continue;
        }
        if (explicit && records.count() > 0) {
          Map<TopicIdPartition, Optional<org.apache.kafka.common.KafkaException>> result = consumer.commitSync();
          boolean ok = true;
          for (Map.Entry<TopicIdPartition, Optional<org.apache.kafka.common.KafkaException>> e : result.entrySet()) {
            if (e.getValue().isPresent()) {
              ok = false;
              emit("{\"ev\":\"ack-error\",\"p\":" + e.getKey().partition() + ",\"error\":" + quote(e.getValue().get().toString()) + "}");
            }
          }
          if (ok) OUT.print(acks);
        }
      }
      consumer.close();
      emit("{\"ev\":\"closed\"}");
    } catch (Exception e) {
      emit("{\"ev\":\"error\",\"error\":" + quote(e.toString()) + "}");
      try {
        consumer.close(Duration.ofSeconds(5));
      } catch (Exception ignored) {
        // closing after a failure
      }
      System.exit(1);
    }
  }
}
