package dev.localsqs.compat.jms;

import static dev.localsqs.compat.Checks.assertEq;
import static dev.localsqs.compat.Checks.check;
import static org.awaitility.Awaitility.await;

import com.amazon.sqs.javamessaging.ProviderConfiguration;
import com.amazon.sqs.javamessaging.SQSConnection;
import com.amazon.sqs.javamessaging.SQSConnectionFactory;
import com.amazon.sqs.javamessaging.SQSMessagingClientConstants;
import dev.localsqs.compat.Checks;
import dev.localsqs.compat.Recorder;
import dev.localsqs.compat.Scenario;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * JMS through amazon-sqs-java-messaging-lib ({@code SQSConnectionFactory} over an SDK 2.x {@code
 * SqsClient}): a producer and consumers of text messages with properties, AUTO_ACKNOWLEDGE,
 * CLIENT_ACKNOWLEDGE with a redelivery, an asynchronous MessageListener, and a FIFO queue with
 * group and deduplication ids.
 */
public final class JmsScenario {
  private static final long RECEIVE_MS = 10_000;

  private final String name;
  private final URI endpoint;
  private final String prefix;
  private final Recorder recorder = new Recorder();
  private final SqsClient sqs;
  private SQSConnection connection;
  private final Map<String, String> urls = new TreeMap<>();

  /**
   * Makes the scenario and its client (the recorder attached, the SDK's defaults otherwise).
   *
   * @param name the client's name in the output and in queue names
   * @param endpoint the server
   */
  public JmsScenario(String name, URI endpoint) {
    this.name = name;
    this.endpoint = endpoint;
    this.prefix = "compat-" + name + "-" + ProcessHandle.current().pid() + "-";
    this.sqs =
        SqsClient.builder()
            .endpointOverride(endpoint)
            .region(Region.US_EAST_1)
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
            .overrideConfiguration(o -> o.addExecutionInterceptor(recorder))
            .build();
  }

  /** Closes the connection (its prefetching consumers) and the client. */
  public void close() throws JMSException {
    if (connection != null) {
      connection.close(); // its consumers are closed already (closeQuickly)
    }
    sqs.close();
  }

  private List<String> counts(String queue) {
    Map<String, String> a =
        sqs.getQueueAttributes(
                b ->
                    b.queueUrl(urls.get(queue))
                        .attributeNames(
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
            .attributesAsStrings();
    return List.of(
        a.get("ApproximateNumberOfMessages"), a.get("ApproximateNumberOfMessagesNotVisible"));
  }

  private void awaitDrained(String queue) {
    await(queue + " empty")
        .atMost(Duration.ofSeconds(30))
        .until(() -> counts(queue).equals(List.of("0", "0")));
  }

  /**
   * Closes a consumer and its session. A consumer's prefetch thread parks 20 s long polls, and
   * closing waits for the one in progress; moving the server's clock by 20 s while the close waits
   * ends that poll at once.
   */
  private void closeQuickly(MessageConsumer consumer, Session session) throws Exception {
    CompletableFuture<Void> closing =
        CompletableFuture.runAsync(
            () -> {
              try {
                consumer.close();
                session.close();
              } catch (JMSException e) {
                throw new CompletionException(e);
              }
            });
    while (!closing.isDone()) {
      Checks.advanceClock(endpoint, 20);
      try {
        closing.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException stillWaiting) {
        // the poll was parked before the advance: advance again
      }
    }
    closing.join();
  }

  private static String text(Message m) throws JMSException {
    check(m instanceof TextMessage, "a TextMessage: " + m);
    return ((TextMessage) m).getText();
  }

  /**
   * The steps.
   *
   * @return the scenario
   */
  public Scenario scenario() {
    Scenario s = new Scenario();
    s.step(
        "connection + queues",
        () -> {
          connection =
              new SQSConnectionFactory(new ProviderConfiguration(), sqs).createConnection();
          var wrapper = connection.getWrappedAmazonSQSClient();
          urls.put("std", wrapper.createQueue(prefix + "std").queueUrl());
          urls.put("ack", wrapper.createQueue(prefix + "ack").queueUrl());
          urls.put("listener", wrapper.createQueue(prefix + "listener").queueUrl());
          urls.put(
              "fifo",
              wrapper
                  .createQueue(
                      software.amazon.awssdk.services.sqs.model.CreateQueueRequest.builder()
                          .queueName(prefix + "jobs.fifo")
                          .attributesWithStrings(Map.of("FifoQueue", "true"))
                          .build())
                  .queueUrl());
          check(wrapper.queueExists(prefix + "std"), "queueExists");
          check(!wrapper.queueExists(prefix + "missing"), "queueExists of a missing queue");
          connection.start();
        });
    s.step(
        "text messages, AUTO_ACKNOWLEDGE",
        () -> {
          Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
          Queue queue = session.createQueue(prefix + "std");
          MessageProducer producer = session.createProducer(queue);
          List<String> ids = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            TextMessage m = session.createTextMessage("text-" + i + " \u00e9\u6f22");
            m.setStringProperty("color", "blue");
            m.setIntProperty("n", i);
            m.setBooleanProperty("urgent", i == 0);
            m.setLongProperty("big", 1L << 40);
            producer.send(m);
            ids.add(m.getJMSMessageID());
            check(m.getJMSMessageID().startsWith("ID:"), "JMSMessageID " + m.getJMSMessageID());
          }
          MessageConsumer consumer = session.createConsumer(queue);
          List<String> got = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            Message m = consumer.receive(RECEIVE_MS);
            check(m != null, "message " + i + " received");
            got.add(text(m));
            check(ids.contains(m.getJMSMessageID()), "a sent id: " + m.getJMSMessageID());
            assertEq(m.getStringProperty("color"), "blue", "String property");
            int n = m.getIntProperty("n");
            assertEq(m.getBooleanProperty("urgent"), n == 0, "boolean property");
            assertEq(m.getLongProperty("big"), 1L << 40, "long property");
            assertEq(
                m.getIntProperty(SQSMessagingClientConstants.JMSX_DELIVERY_COUNT),
                1,
                "delivery count");
            check(!m.getJMSRedelivered(), "not redelivered");
          }
          got.sort(null);
          assertEq(
              got,
              List.of("text-0 \u00e9\u6f22", "text-1 \u00e9\u6f22", "text-2 \u00e9\u6f22"),
              "bodies");
          awaitDrained("std"); // AUTO_ACKNOWLEDGE deleted each one
          closeQuickly(consumer, session);
        });
    s.step(
        "CLIENT_ACKNOWLEDGE + redelivery",
        () -> {
          Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
          Queue queue = session.createQueue(prefix + "ack");
          MessageProducer producer = session.createProducer(queue);
          producer.send(session.createTextMessage("unacked"));
          MessageConsumer consumer = session.createConsumer(queue);
          Message first = consumer.receive(RECEIVE_MS);
          assertEq(text(first), "unacked", "first delivery");
          await("in flight, not deleted")
              .atMost(Duration.ofSeconds(30))
              .until(() -> counts("ack").equals(List.of("0", "1")));
          // Not acknowledged: after the visibility timeout (on the server's clock) it is back.
          Checks.advanceClock(endpoint, 31);
          Message again = consumer.receive(RECEIVE_MS);
          check(again != null, "redelivered");
          assertEq(text(again), "unacked", "second delivery");
          assertEq(again.getJMSMessageID(), first.getJMSMessageID(), "same message");
          check(again.getJMSRedelivered(), "JMSRedelivered");
          assertEq(
              again.getIntProperty(SQSMessagingClientConstants.JMSX_DELIVERY_COUNT),
              2,
              "delivery count");
          again.acknowledge();
          awaitDrained("ack");
          closeQuickly(consumer, session);
        });
    s.step(
        "MessageListener",
        () -> {
          Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
          Queue queue = session.createQueue(prefix + "listener");
          List<String> heard = new CopyOnWriteArrayList<>();
          MessageConsumer consumer = session.createConsumer(queue);
          consumer.setMessageListener(
              m -> {
                try {
                  heard.add(((TextMessage) m).getText());
                } catch (JMSException e) {
                  heard.add("error: " + e);
                }
              });
          MessageProducer producer = session.createProducer(queue);
          for (int i = 0; i < 5; i++) {
            producer.send(session.createTextMessage("heard-" + i));
          }
          await("5 messages heard").atMost(Duration.ofSeconds(30)).until(() -> heard.size() >= 5);
          List<String> sorted = new ArrayList<>(heard);
          sorted.sort(null);
          assertEq(sorted, List.of("heard-0", "heard-1", "heard-2", "heard-3", "heard-4"), "heard");
          awaitDrained("listener");
          closeQuickly(consumer, session);
        });
    s.step(
        "FIFO with group id + dedup",
        () -> {
          Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
          Queue queue = session.createQueue(prefix + "jobs.fifo");
          MessageProducer producer = session.createProducer(queue);
          String[][] sends = {
            {"g1", "a1", "d-a1"}, {"g2", "b1", "d-b1"}, {"g1", "a2", "d-a2"},
            {"g1", "a2-again", "d-a2"}, {"g2", "b2", "d-b2"}, {"g1", "a3", "d-a3"},
          };
          List<String> sequence = new ArrayList<>();
          for (String[] x : sends) {
            TextMessage m = session.createTextMessage(x[1]);
            m.setStringProperty(SQSMessagingClientConstants.JMSX_GROUP_ID, x[0]);
            m.setStringProperty(SQSMessagingClientConstants.JMS_SQS_DEDUPLICATION_ID, x[2]);
            producer.send(m);
            sequence.add(m.getStringProperty(SQSMessagingClientConstants.JMS_SQS_SEQUENCE_NUMBER));
          }
          check(
              sequence.stream().allMatch(n -> n != null && n.matches("\\d+")),
              "sequence numbers " + sequence);
          MessageConsumer consumer = session.createConsumer(queue);
          Map<String, List<String>> byGroup = new TreeMap<>();
          for (int i = 0; i < 5; i++) {
            Message m = consumer.receive(RECEIVE_MS);
            check(m != null, "FIFO message " + i);
            String group = m.getStringProperty(SQSMessagingClientConstants.JMSX_GROUP_ID);
            check(
                m.getStringProperty(SQSMessagingClientConstants.JMS_SQS_SEQUENCE_NUMBER) != null,
                "received sequence number");
            byGroup.computeIfAbsent(group, g -> new ArrayList<>()).add(text(m));
            m.acknowledge();
          }
          assertEq(
              byGroup,
              Map.of("g1", List.of("a1", "a2", "a3"), "g2", List.of("b1", "b2")),
              "per-group order, duplicate dropped");
          awaitDrained("fifo");
          closeQuickly(consumer, session);
        });
    s.step(
        "delete queues",
        () -> {
          for (String url : urls.values()) {
            sqs.deleteQueue(b -> b.queueUrl(url));
          }
          assertEq(
              sqs.listQueues(b -> b.queueNamePrefix(prefix)).queueUrls(), List.of(), "queues left");
        });
    s.step("protocol evidence", () -> recorder.check(name, "json"));
    return s;
  }
}
