// The Java client's transactional producer against Sediment: commit, abort,
// consume-transform-produce with sendOffsetsToTransaction from a real group
// member, read_committed and read_uncommitted consumers, and fencing by a
// second producer with the same transactional.id. Prints RESULT lines that
// test/e2e/transactions-java.e2e.test.ts asserts on.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.*;

public class TxnClient {
  static String bootstrap;

  static KafkaProducer<String, String> producer(String txnId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    return new KafkaProducer<>(p);
  }

  static KafkaConsumer<String, String> consumer(String group, String isolation) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    if (group != null) p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return new KafkaConsumer<>(p);
  }

  /** Every value of the topic up to the end offsets (the LSO under read_committed), sorted. */
  static List<String> readAll(String topic, String isolation) {
    try (KafkaConsumer<String, String> c = consumer(null, isolation)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (var info : c.partitionsFor(topic)) tps.add(new TopicPartition(topic, info.partition()));
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps);
      List<String> values = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (System.currentTimeMillis() > deadline) throw new RuntimeException("timed out reading " + topic);
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) values.add(r.value());
      }
      Collections.sort(values);
      return values;
    }
  }

  public static void main(String[] args) throws Exception {
    bootstrap = args[0];
    String in = args[1], out = args[2], group = args[3];
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      admin.createTopics(List.of(new NewTopic(in, 1, (short) 1), new NewTopic(out, 2, (short) 1))).all().get();
    }
    try (KafkaProducer<String, String> p = producer("java-seed")) {
      p.initTransactions();
      p.beginTransaction();
      for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(in, "k" + i, "in" + i));
      p.commitTransaction();
    }

    KafkaProducer<String, String> p = producer("java-tx");
    p.initTransactions();
    p.beginTransaction();
    for (int i = 0; i < 3; i++) p.send(new ProducerRecord<>(out, "k" + i, "c" + i));
    p.commitTransaction();
    p.beginTransaction();
    for (int i = 0; i < 3; i++) p.send(new ProducerRecord<>(out, "k" + i, "a" + i));
    p.flush();
    p.abortTransaction();

    // Consume-transform-produce: offsets committed with the transaction, by a group member.
    try (KafkaConsumer<String, String> c = consumer(group, "read_committed")) {
      c.subscribe(List.of(in));
      List<ConsumerRecord<String, String>> got = new ArrayList<>();
      long deadline = System.currentTimeMillis() + 30_000;
      while (got.size() < 10 && System.currentTimeMillis() < deadline) for (var r : c.poll(Duration.ofMillis(200))) got.add(r);
      System.out.println("RESULT consumedInput=" + got.size());
      p.beginTransaction();
      for (var r : got) p.send(new ProducerRecord<>(out, r.key(), "t-" + r.value()));
      long next = got.get(got.size() - 1).offset() + 1;
      p.sendOffsetsToTransaction(Map.of(new TopicPartition(in, 0), new OffsetAndMetadata(next)), c.groupMetadata());
      p.commitTransaction();
      // An aborted offset commit is dropped.
      p.beginTransaction();
      p.send(new ProducerRecord<>(out, "k", "a-last"));
      p.sendOffsetsToTransaction(Map.of(new TopicPartition(in, 0), new OffsetAndMetadata(3)), c.groupMetadata());
      p.flush();
      p.abortTransaction();
    }
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      var offsets = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      System.out.println("RESULT groupOffset=" + offsets.get(new TopicPartition(in, 0)).offset());
    }

    // Fencing: a new producer with the same transactional.id fences the old one.
    p.beginTransaction();
    p.send(new ProducerRecord<>(out, "k", "zombie")).get();
    KafkaProducer<String, String> p2 = producer("java-tx");
    p2.initTransactions();
    String fenced = "none";
    try {
      p.send(new ProducerRecord<>(out, "k", "zombie2")).get();
      p.commitTransaction();
    } catch (Exception e) {
      Throwable t = e instanceof ProducerFencedException ? e : e.getCause();
      fenced = t == null ? e.getClass().getSimpleName() : t.getClass().getSimpleName();
    }
    System.out.println("RESULT fenced=" + fenced);
    p.close(Duration.ofSeconds(5));
    p2.beginTransaction();
    p2.send(new ProducerRecord<>(out, "k", "zend"));
    p2.commitTransaction();
    p2.close();

    System.out.println("RESULT committed=" + String.join(",", readAll(out, "read_committed")));
    System.out.println("RESULT uncommitted=" + String.join(",", readAll(out, "read_uncommitted")));
  }
}
