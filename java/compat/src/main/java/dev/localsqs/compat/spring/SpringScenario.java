package dev.localsqs.compat.spring;

import static dev.localsqs.compat.Checks.assertEq;
import static dev.localsqs.compat.Checks.check;
import static org.awaitility.Awaitility.await;

import dev.localsqs.compat.Checks;
import dev.localsqs.compat.Recorder;
import dev.localsqs.compat.Scenario;
import io.awspring.cloud.sqs.operations.SendResult;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.messaging.Message;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Spring Cloud AWS against localsqs: {@code SqsTemplate} sending and receiving,
 * {@code @SqsListener}s on a standard and a FIFO queue, acknowledgement ON_SUCCESS and MANUAL,
 * visibility extension, and a dead-letter queue after failures. Time passes on the server's clock
 * ({@code POST /_localsqs/clock}); everything that waits polls with a deadline.
 */
public final class SpringScenario {
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private final String name;
  private final URI endpoint;
  private final String prefix;
  private ConfigurableApplicationContext context;
  private SqsClient sqs; // a plain SDK client for set-up and for looking at queues

  /**
   * Makes the scenario.
   *
   * @param name the client's name in the output
   * @param endpoint the server
   * @param prefix the prefix of every queue name ({@code app.prefix})
   */
  public SpringScenario(String name, URI endpoint, String prefix) {
    this.name = name;
    this.endpoint = endpoint;
    this.prefix = prefix;
  }

  /**
   * The properties that point the application at the server: what a test's
   * {@code @DynamicPropertySource} sets.
   *
   * @param endpoint the server
   * @param prefix the queue-name prefix
   * @return property names and values
   */
  public static Map<String, String> properties(URI endpoint, String prefix) {
    Map<String, String> p = new TreeMap<>();
    p.put("spring.cloud.aws.sqs.endpoint", endpoint.toString());
    p.put("spring.cloud.aws.region.static", "us-east-1");
    p.put("spring.cloud.aws.credentials.access-key", "test");
    p.put("spring.cloud.aws.credentials.secret-key", "test");
    // Short long polls, so that the listener containers stop quickly with the context.
    p.put("spring.cloud.aws.sqs.listener.poll-timeout", "2s");
    p.put("app.prefix", prefix);
    return p;
  }

  /**
   * Creates the queues the listeners read, before the application starts (the DLQ's source needs
   * its RedrivePolicy, which Spring Cloud AWS would not set when it creates a queue).
   *
   * @param endpoint the server
   * @param prefix the queue-name prefix
   */
  public static void createQueues(URI endpoint, String prefix) {
    try (SqsClient sqs = client(endpoint)) {
      for (String q : List.of("orders", "manual", "slow")) {
        sqs.createQueue(b -> b.queueName(prefix + q));
      }
      sqs.createQueue(
          b ->
              b.queueName(prefix + "orders.fifo")
                  .attributesWithStrings(Map.of("FifoQueue", "true")));
      String dlq = sqs.createQueue(b -> b.queueName(prefix + "poison-dlq")).queueUrl();
      String arn =
          sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
              .attributes()
              .get(QueueAttributeName.QUEUE_ARN);
      sqs.createQueue(
          b ->
              b.queueName(prefix + "poison")
                  .attributesWithStrings(
                      Map.of(
                          "RedrivePolicy",
                          "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":2}")));
    }
  }

  private static SqsClient client(URI endpoint) {
    return SqsClient.builder()
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .build();
  }

  /**
   * Gives the scenario the running application.
   *
   * @param context the application context
   * @return this
   */
  public SpringScenario with(ConfigurableApplicationContext context) {
    this.context = context;
    this.sqs = client(endpoint);
    return this;
  }

  /** Closes the scenario's own SDK client (not the application). */
  public void close() {
    if (sqs != null) {
      sqs.close();
    }
  }

  private SqsTemplate template() {
    return context.getBean(SqsTemplate.class);
  }

  private Listeners listeners() {
    return context.getBean(Listeners.class);
  }

  private String url(String suffix) {
    return sqs.getQueueUrl(b -> b.queueName(prefix + suffix)).queueUrl();
  }

  /** Visible and in-flight counts of a queue. */
  private List<String> counts(String suffix) {
    Map<String, String> a =
        sqs.getQueueAttributes(
                b ->
                    b.queueUrl(url(suffix))
                        .attributeNames(
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                            QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE))
            .attributesAsStrings();
    return List.of(
        a.get("ApproximateNumberOfMessages"), a.get("ApproximateNumberOfMessagesNotVisible"));
  }

  private void awaitDrained(String suffix) {
    await("queue " + suffix + " empty")
        .atMost(DEADLINE)
        .until(() -> counts(suffix).equals(List.of("0", "0")));
  }

  /**
   * Advances the server's clock by {@code seconds} on every poll until {@code done} holds: for what
   * takes several visibility timeouts, where one advance more does no harm.
   */
  private void advanceUntil(String what, int seconds, java.util.concurrent.Callable<Boolean> done) {
    await(what)
        .atMost(DEADLINE)
        .pollInterval(Duration.ofMillis(250))
        .until(
            () -> {
              if (done.call()) {
                return true;
              }
              Checks.advanceClock(endpoint, seconds);
              return false;
            });
  }

  /** Milliseconds left before the in-flight message of a queue becomes visible again. */
  private long timeLeftMs(String suffix) {
    String page =
        Checks.admin(
            endpoint,
            "GET",
            "/_localsqs/queues/" + prefix + suffix + "/messages?state=in_flight",
            null);
    Matcher m = Pattern.compile("\"time_left_ms\":(\\d+)").matcher(page);
    check(m.find(), "an in-flight message in " + page);
    return Long.parseLong(m.group(1));
  }

  /**
   * The steps.
   *
   * @return the scenario
   */
  public Scenario scenario() {
    Scenario s = new Scenario();
    s.step(
        "context + listeners up",
        () -> {
          check(context.isRunning(), "context running");
          check(template() != null, "an SqsTemplate bean");
        });
    s.step(
        "SqsTemplate send + ON_SUCCESS",
        () -> {
          List<String> ids = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            int n = i;
            SendResult<String> r =
                template()
                    .send(
                        to ->
                            to.queue(prefix + "orders")
                                .payload("order-" + n)
                                .header("tenant", "t\u00e9st")
                                .header("attempt", n));
            ids.add(r.messageId().toString());
          }
          await("3 orders delivered")
              .atMost(DEADLINE)
              .until(() -> listeners().deliveries("orders").size() >= 3);
          assertEq(
              new java.util.TreeSet<>(listeners().deliveries("orders")),
              new java.util.TreeSet<>(List.of("order-0", "order-1", "order-2")),
              "orders received");
          Map<String, Object> h = listeners().lastOrderHeaders;
          assertEq(h.get("tenant"), "t\u00e9st", "String header (message attribute) " + h);
          check(h.get("attempt") instanceof Number, "Number header " + h);
          check(ids.contains(String.valueOf(h.get("id"))), "the delivered id was sent " + h);
          awaitDrained("orders"); // ON_SUCCESS: deleted after the listener returned
        });
    s.step(
        "ON_SUCCESS failure redelivered",
        () -> {
          template().send(prefix + "orders", "fail-once-1");
          await("first delivery")
              .atMost(DEADLINE)
              .until(() -> listeners().count("orders", "fail-once-1") >= 1);
          // It threw, so it was not deleted: it comes back after the visibility timeout.
          Checks.advanceClock(endpoint, 31);
          await("redelivery")
              .atMost(DEADLINE)
              .until(() -> listeners().count("orders", "fail-once-1") >= 2);
          awaitDrained("orders");
          assertEq(listeners().count("orders", "fail-once-1"), 2L, "deliveries");
        });
    s.step(
        "FIFO listener order + dedup",
        () -> {
          String q = prefix + "orders.fifo";
          String[][] sends = {
            {"g1", "a1", "d-a1"}, {"g2", "b1", "d-b1"}, {"g1", "a2", "d-a2"},
            {"g1", "a2-again", "d-a2"}, {"g2", "b2", "d-b2"}, {"g1", "a3", "d-a3"},
          };
          for (String[] m : sends) {
            template()
                .send(
                    to ->
                        to.queue(q)
                            .payload(m[1])
                            .messageGroupId(m[0])
                            .messageDeduplicationId(m[2]));
          }
          await("5 FIFO messages")
              .atMost(DEADLINE)
              .until(() -> listeners().deliveries("orders.fifo").size() >= 5);
          Map<String, List<String>> byGroup = new TreeMap<>();
          for (String d : listeners().deliveries("orders.fifo")) {
            String[] gb = d.split(":", 2);
            byGroup.computeIfAbsent(gb[0], g -> new ArrayList<>()).add(gb[1]);
          }
          assertEq(
              byGroup,
              Map.of("g1", List.of("a1", "a2", "a3"), "g2", List.of("b1", "b2")),
              "per-group order, duplicate dropped");
          awaitDrained("orders.fifo");
        });
    s.step(
        "MANUAL acknowledgement",
        () -> {
          template().send(prefix + "manual", "ack-1");
          template().send(prefix + "manual", "keep-1");
          await("both delivered")
              .atMost(DEADLINE)
              .until(
                  () ->
                      listeners().count("manual", "ack-1") == 1
                          && listeners().count("manual", "keep-1") == 1);
          await("ack-1 deleted, keep-1 in flight")
              .atMost(DEADLINE)
              .until(() -> counts("manual").equals(List.of("0", "1")));
          Checks.advanceClock(endpoint, 31);
          await("keep-1 redelivered")
              .atMost(DEADLINE)
              .until(() -> listeners().count("manual", "keep-1") >= 2);
          awaitDrained("manual");
          assertEq(listeners().count("manual", "ack-1"), 1L, "ack-1 deliveries");
        });
    s.step(
        "visibility extension",
        () -> {
          template().send(prefix + "slow", "slow-1");
          await("delivered").atMost(DEADLINE).until(() -> listeners().count("slow", "slow-1") == 1);
          // The queue's timeout is 30 s; Visibility.changeTo(300) raised it.
          await("visibility raised")
              .atMost(DEADLINE)
              .until(
                  () -> counts("slow").equals(List.of("0", "1")) && timeLeftMs("slow") > 200_000);
          Checks.advanceClock(endpoint, 60);
          check(timeLeftMs("slow") > 150_000, "still in flight 60 s later");
          assertEq(listeners().count("slow", "slow-1"), 1L, "not redelivered yet");
          Checks.advanceClock(endpoint, 250); // 310 s after the delivery
          await("redelivered after 300 s")
              .atMost(DEADLINE)
              .until(() -> listeners().count("slow", "slow-1") >= 2);
          awaitDrained("slow");
        });
    s.step(
        "dead-letter queue after failures",
        () -> {
          template().send(prefix + "poison", "poison-1");
          advanceUntil(
              "moved to the DLQ", 31, () -> counts("poison-dlq").equals(List.of("1", "0")));
          assertEq(
              listeners().count("poison", "poison-1"), 2L, "failed deliveries (maxReceiveCount)");
          Optional<Message<String>> moved =
              template().receive(from -> from.queue(prefix + "poison-dlq"), String.class);
          check(moved.isPresent(), "SqsTemplate.receive from the DLQ");
          assertEq(moved.get().getPayload(), "poison-1", "DLQ body");
          awaitDrained("poison-dlq"); // the template acknowledges what it received
          assertEq(counts("poison"), List.of("0", "0"), "source queue");
        });
    s.step("protocol evidence", () -> context.getBean(Recorder.class).check(name, "json"));
    return s;
  }
}
