// The Java admin client against Sediment (tiered storage on): topic
// compression.type and compacted-topic creation, as Kafka answers them. Prints
// RESULT lines that test/e2e/topic-rules-java.e2e.test.ts asserts on.
//   - createTopics with compression.type for each of Kafka's names, then
//     describeConfigs; an unknown codec name and a gzip level of 0 refused;
//   - incrementalAlterConfigs compression.type on an existing topic;
//   - a compacted topic created without remote.storage.enable (untiered), and
//     with remote.storage.enable=true (refused);
//   - a gzip producer on a zstd topic: records read back intact.
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class TopicRulesClient {
  static Admin admin;

  static String create(String name, Map<String, String> configs) {
    try {
      admin.createTopics(List.of(new NewTopic(name, 1, (short) 1).configs(configs))).all().get();
      return "ok";
    } catch (ExecutionException e) {
      return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
    } catch (InterruptedException e) {
      throw new RuntimeException(e);
    }
  }

  static Config describe(String topic) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    return admin.describeConfigs(List.of(r)).all().get().get(r);
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    admin = Admin.create(ap);

    for (String codec : List.of("uncompressed", "gzip", "snappy", "lz4", "zstd", "producer")) {
      String topic = "j-codec-" + codec;
      String created = create(topic, Map.of("compression.type", codec));
      ConfigEntry e = describe(topic).get("compression.type");
      System.out.println("RESULT create." + codec + "=" + created + "|" + e.value() + "|" + e.source());
    }
    System.out.println("RESULT create.bogus=" + create("j-codec-bogus", Map.of("compression.type", "brotli")));
    System.out.println("RESULT create.gzip0=" + create("j-codec-gzip0", Map.of("compression.type", "gzip", "compression.gzip.level", "0")));
    System.out.println("RESULT create.zstdLevel=" + create("j-codec-zstd9", Map.of("compression.type", "zstd", "compression.zstd.level", "9"))
        + "|" + describe("j-codec-zstd9").get("compression.zstd.level").value());

    ConfigResource alter = new ConfigResource(ConfigResource.Type.TOPIC, "j-codec-producer");
    admin.incrementalAlterConfigs(Map.of(alter, List.of(new AlterConfigOp(new ConfigEntry("compression.type", "lz4"), AlterConfigOp.OpType.SET)))).all().get();
    System.out.println("RESULT alter=" + describe("j-codec-producer").get("compression.type").value());

    String compact = create("j-compact", Map.of("cleanup.policy", "compact"));
    Config cc = describe("j-compact");
    System.out.println("RESULT compact=" + compact + "|" + cc.get("cleanup.policy").value() + "|" + cc.get("remote.storage.enable").value());
    System.out.println("RESULT compactTiered=" + create("j-compact-tiered", Map.of("cleanup.policy", "compact", "remote.storage.enable", "true")));
    System.out.println("RESULT plainTiered=" + describe("j-codec-zstd").get("remote.storage.enable").value());

    Properties pp = new Properties();
    pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    pp.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "gzip");
    pp.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
      for (int i = 0; i < 100; i++) p.send(new ProducerRecord<>("j-codec-zstd", "k" + i, "value-" + i + "-".repeat(50)));
      p.flush();
    }
    Properties cp = new Properties();
    cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    List<String> got = new ArrayList<>();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
      TopicPartition tp = new TopicPartition("j-codec-zstd", 0);
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long deadline = System.currentTimeMillis() + 30_000;
      while (got.size() < 100 && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) got.add(r.offset() + ":" + r.key() + ":" + r.value());
      }
    }
    boolean intact = got.size() == 100;
    for (int i = 0; intact && i < 100; i++) intact = got.get(i).equals(i + ":k" + i + ":value-" + i + "-".repeat(50));
    System.out.println("RESULT zstdRoundTrip=" + got.size() + "|" + intact);
    admin.close();
  }
}
