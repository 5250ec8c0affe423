package dev.localsqs.compat.sdk;

import static dev.localsqs.compat.Checks.assertEq;
import static dev.localsqs.compat.Checks.check;
import static dev.localsqs.compat.Checks.md5Hex;
import static dev.localsqs.compat.Checks.md5OfAttributes;

import dev.localsqs.compat.Checks;
import dev.localsqs.compat.Checks.Attr;
import dev.localsqs.compat.Recorder;
import dev.localsqs.compat.Scenario;
import java.math.BigInteger;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.retry.RetryPolicy;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchResponse;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;
import software.amazon.awssdk.services.sqs.model.TooManyEntriesInBatchRequestException;

/**
 * The compatibility scenario through the AWS SDK for Java 2.x, the steps of tests/compat/js/v3.js
 * and python/boto3_scenario.py: queues, attributes and MD5s, batches, long polling, visibility
 * (also on the moved clock), FIFO order and deduplication, a dead-letter queue, tags, purge, queue
 * attributes, errors, and protocol evidence. The SDK's own MD5 validation stays on (the default);
 * the scenario also checks every MD5 itself.
 *
 * <p>This file compiles against SDK 2.57 (AWS JSON) and 2.20 (AWS Query, the sdk-query module), so
 * it uses only API both have: {@code attributeNamesWithStrings} rather than the newer {@code
 * messageSystemAttributeNames}.
 */
public final class SdkScenario {
  private static final String NON_EXISTENT = "AWS.SimpleQueueService.NonExistentQueue";

  private final String name;
  private final String protocol;
  private final URI endpoint;
  private final Recorder recorder = new Recorder();
  private final SqsClient sqs;
  private final SqsAsyncClient async; // null for the sync client
  private final String prefix;
  private final Map<String, String> q = new LinkedHashMap<>();

  private static final Map<String, MessageAttributeValue> ATTRS =
      Map.of(
          "color",
              MessageAttributeValue.builder()
                  .dataType("String")
                  .stringValue("blue \u00e9\u6f22")
                  .build(),
          "timestamp",
              MessageAttributeValue.builder()
                  .dataType("Number.java.lang.Long")
                  .stringValue("1493147359900")
                  .build(),
          "blob",
              MessageAttributeValue.builder()
                  .dataType("Binary")
                  .binaryValue(
                      SdkBytes.fromByteArray(new byte[] {0, 1, 2, (byte) 0xfe, (byte) 0xff}))
                  .build());

  /**
   * Makes the scenario with its own client (sync, or async when {@code asyncClient}), with retries
   * off so that no server error is hidden, and the protocol recorder attached.
   *
   * @param name the client's name in the output and in queue names
   * @param endpoint the server
   * @param asyncClient whether to drive the async client
   * @param protocol the protocol every request must use: {@code json} or {@code query}
   */
  public SdkScenario(String name, URI endpoint, boolean asyncClient, String protocol) {
    this.name = name;
    this.protocol = protocol;
    this.endpoint = endpoint;
    ClientOverrideConfiguration override =
        ClientOverrideConfiguration.builder()
            .addExecutionInterceptor(recorder)
            .retryPolicy(RetryPolicy.none())
            .build();
    var credentials = StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test"));
    if (asyncClient) {
      this.async =
          SqsAsyncClient.builder()
              .endpointOverride(endpoint)
              .region(Region.US_EAST_1)
              .credentialsProvider(credentials)
              .overrideConfiguration(override)
              .build();
      this.sqs = AsyncAsSync.wrap(async);
    } else {
      this.async = null;
      this.sqs =
          SqsClient.builder()
              .endpointOverride(endpoint)
              .region(Region.US_EAST_1)
              .credentialsProvider(credentials)
              .overrideConfiguration(override)
              .build();
    }
    this.prefix = "compat-" + name + "-" + ProcessHandle.current().pid();
  }

  /** Closes the client. */
  public void close() {
    if (async != null) {
      async.close();
    } else {
      sqs.close();
    }
  }

  private String createQueue(String suffix, Map<String, String> attributes) {
    return sqs.createQueue(
            b -> b.queueName(prefix + "-" + suffix).attributesWithStrings(attributes))
        .queueUrl();
  }

  private String arn(String url) {
    return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
        .attributes()
        .get(QueueAttributeName.QUEUE_ARN);
  }

  private List<Message> receive(String url, int wait) {
    return sqs.receiveMessage(
            b ->
                b.queueUrl(url)
                    .maxNumberOfMessages(10)
                    .waitTimeSeconds(wait)
                    .attributeNamesWithStrings("All")
                    .messageAttributeNames("All"))
        .messages();
  }

  private static Map<String, Attr> plain(Map<String, MessageAttributeValue> attrs) {
    Map<String, Attr> out = new TreeMap<>();
    attrs.forEach(
        (k, v) ->
            out.put(
                k,
                v.binaryValue() != null
                    ? Attr.binary(v.binaryValue().asByteArray())
                    : Attr.string(v.dataType(), v.stringValue())));
    return out;
  }

  private static String show(Map<String, Attr> attrs) {
    return attrs.entrySet().stream()
        .map(
            e ->
                e.getKey()
                    + "="
                    + e.getValue().dataType()
                    + ":"
                    + (e.getValue().binary() != null
                        ? java.util.HexFormat.of().formatHex(e.getValue().binary())
                        : e.getValue().string()))
        .collect(Collectors.joining(", ", "{", "}"));
  }

  private static List<List<Object>> failed(List<BatchResultErrorEntry> entries) {
    return entries.stream()
        .map(e -> List.<Object>of(e.id(), e.code(), e.senderFault()))
        .collect(Collectors.toList());
  }

  /**
   * The steps. The JUnit tests run them as dynamic tests; {@link SdkMain} prints them.
   *
   * @return the scenario
   */
  public Scenario scenario() {
    Scenario s = new Scenario();
    s.step(
        "create queues",
        () -> {
          q.put("std", createQueue("std", Map.of()));
          q.put("fifo", createQueue("fifo.fifo", Map.of("FifoQueue", "true")));
          check(q.get("std").endsWith("/000000000000/" + prefix + "-std"), q.get("std"));
          List<String> urls = sqs.listQueues(b -> b.queueNamePrefix(prefix)).queueUrls();
          check(urls.containsAll(List.of(q.get("std"), q.get("fifo"))), urls.toString());
          assertEq(createQueue("std", Map.of()), q.get("std"), "CreateQueue again is idempotent");
        });
    s.step(
        "send/receive attributes",
        () -> {
          String body = "hello <localsqs> & \"friends\" \u00e9";
          SendMessageResponse sent =
              sqs.sendMessage(
                  b -> b.queueUrl(q.get("std")).messageBody(body).messageAttributes(ATTRS));
          assertEq(sent.md5OfMessageBody(), md5Hex(body), "MD5OfMessageBody");
          assertEq(
              sent.md5OfMessageAttributes(),
              md5OfAttributes(plain(ATTRS)),
              "MD5OfMessageAttributes");
          List<Message> msgs = receive(q.get("std"), 2);
          assertEq(msgs.size(), 1, "messages received");
          Message m = msgs.get(0);
          assertEq(m.messageId(), sent.messageId(), "MessageId");
          assertEq(m.body(), body, "Body");
          assertEq(m.md5OfBody(), md5Hex(body), "MD5OfBody");
          assertEq(show(plain(m.messageAttributes())), show(plain(ATTRS)), "MessageAttributes");
          assertEq(
              m.md5OfMessageAttributes(),
              md5OfAttributes(plain(m.messageAttributes())),
              "MD5OfMessageAttributes (receive)");
          Map<String, String> a = m.attributesAsStrings();
          assertEq(a.get("ApproximateReceiveCount"), "1", "ApproximateReceiveCount");
          for (String k :
              List.of("SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp")) {
            check(a.containsKey(k), k + " in " + a);
          }
          sqs.deleteMessage(b -> b.queueUrl(q.get("std")).receiptHandle(m.receiptHandle()));
          assertEq(receive(q.get("std"), 0).size(), 0, "left after delete");
        });
    s.step(
        "batch send/delete/visibility",
        () -> {
          List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            SendMessageBatchRequestEntry.Builder e =
                SendMessageBatchRequestEntry.builder().id("m" + i).messageBody("batch-" + i);
            if (i == 0) {
              e.messageAttributes(
                  Map.of(
                      "n",
                      MessageAttributeValue.builder().dataType("Number").stringValue("7").build()));
            }
            entries.add(e.build());
          }
          SendMessageBatchResponse res =
              sqs.sendMessageBatch(b -> b.queueUrl(q.get("std")).entries(entries));
          assertEq(res.failed().size(), 0, "failed sends");
          Map<String, SendMessageBatchResultEntry> ok = new HashMap<>();
          res.successful().forEach(e -> ok.put(e.id(), e));
          for (SendMessageBatchRequestEntry e : entries) {
            assertEq(
                ok.get(e.id()).md5OfMessageBody(), md5Hex(e.messageBody()), "MD5 of " + e.id());
          }
          assertEq(
              ok.get("m0").md5OfMessageAttributes(),
              md5OfAttributes(plain(entries.get(0).messageAttributes())),
              "batch attribute MD5");
          Map<String, Message> got = new TreeMap<>();
          long deadline = System.nanoTime() + 5_000_000_000L;
          while (got.size() < 3 && System.nanoTime() < deadline) {
            for (Message m : receive(q.get("std"), 1)) {
              got.put(m.body(), m);
            }
          }
          assertEq(
              got.keySet(),
              new TreeSet<>(List.of("batch-0", "batch-1", "batch-2")),
              "batch received");
          List<String> handles =
              IntStream.range(0, 3).mapToObj(i -> got.get("batch-" + i).receiptHandle()).toList();
          ChangeMessageVisibilityBatchResponse vis =
              sqs.changeMessageVisibilityBatch(
                  b ->
                      b.queueUrl(q.get("std"))
                          .entries(
                              ChangeMessageVisibilityBatchRequestEntry.builder()
                                  .id("ok")
                                  .receiptHandle(handles.get(0))
                                  .visibilityTimeout(60)
                                  .build(),
                              ChangeMessageVisibilityBatchRequestEntry.builder()
                                  .id("bad")
                                  .receiptHandle("not-a-receipt-handle")
                                  .visibilityTimeout(60)
                                  .build()));
          assertEq(
              vis.successful().stream().map(e -> e.id()).toList(),
              List.of("ok"),
              "visibility Successful");
          assertEq(
              failed(vis.failed()),
              List.of(List.of("bad", "ReceiptHandleIsInvalid", true)),
              "visibility Failed");
          List<DeleteMessageBatchRequestEntry> dels = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            dels.add(
                DeleteMessageBatchRequestEntry.builder()
                    .id("d" + i)
                    .receiptHandle(handles.get(i))
                    .build());
          }
          dels.add(
              DeleteMessageBatchRequestEntry.builder()
                  .id("bad")
                  .receiptHandle("not-a-receipt-handle")
                  .build());
          DeleteMessageBatchResponse dr =
              sqs.deleteMessageBatch(b -> b.queueUrl(q.get("std")).entries(dels));
          assertEq(
              new TreeSet<>(dr.successful().stream().map(e -> e.id()).toList()),
              new TreeSet<>(List.of("d0", "d1", "d2")),
              "delete Successful");
          assertEq(
              failed(dr.failed()),
              List.of(List.of("bad", "ReceiptHandleIsInvalid", true)),
              "delete Failed");
          assertEq(receive(q.get("std"), 0).size(), 0, "left after batch delete");
        });
    s.step(
        "long poll woken by send",
        () -> {
          long t0 = System.nanoTime();
          CompletableFuture<List<Message>> poll =
              CompletableFuture.supplyAsync(() -> receive(q.get("std"), 10));
          Thread.sleep(500);
          sqs.sendMessage(b -> b.queueUrl(q.get("std")).messageBody("wake-up"));
          List<Message> msgs = poll.join();
          double elapsed = (System.nanoTime() - t0) / 1e9;
          assertEq(
              msgs.stream().map(Message::body).toList(), List.of("wake-up"), "long poll result");
          // Woken, not timed out: it returned before its 10 s wait ended.
          check(elapsed < 10, "long poll returned after " + elapsed + "s");
          System.out.printf("       long poll woke after %.2fs%n", elapsed);
          sqs.deleteMessage(
              b -> b.queueUrl(q.get("std")).receiptHandle(msgs.get(0).receiptHandle()));
        });
    s.step(
        "visibility timeout",
        () -> {
          sqs.sendMessage(b -> b.queueUrl(q.get("std")).messageBody("vis"));
          List<Message> first =
              sqs.receiveMessage(b -> b.queueUrl(q.get("std")).visibilityTimeout(30)).messages();
          assertEq(first.stream().map(Message::body).toList(), List.of("vis"), "first receive");
          assertEq(receive(q.get("std"), 0).size(), 0, "invisible during its visibility timeout");
          sqs.changeMessageVisibility(
              b ->
                  b.queueUrl(q.get("std"))
                      .receiptHandle(first.get(0).receiptHandle())
                      .visibilityTimeout(0));
          List<Message> again = receive(q.get("std"), 0);
          assertEq(
              again.stream().map(Message::messageId).toList(),
              List.of(first.get(0).messageId()),
              "same message");
          assertEq(
              again.get(0).attributesAsStrings().get("ApproximateReceiveCount"),
              "2",
              "receive count");
          // The visibility timeout itself, passed on the server's clock rather than waited for.
          Checks.advanceClock(endpoint, 31);
          List<Message> third = receive(q.get("std"), 0);
          assertEq(
              third.stream().map(Message::messageId).toList(),
              List.of(first.get(0).messageId()),
              "after 31 s");
          assertEq(
              third.get(0).attributesAsStrings().get("ApproximateReceiveCount"),
              "3",
              "receive count");
          sqs.deleteMessage(
              b -> b.queueUrl(q.get("std")).receiptHandle(third.get(0).receiptHandle()));
        });
    s.step(
        "fifo order + dedup",
        () -> {
          List<BigInteger> seqs = new ArrayList<>();
          String[] dedups = {"d1", "d2", "d1", "d3"};
          for (int i = 0; i < dedups.length; i++) {
            int n = i;
            SendMessageResponse r =
                sqs.sendMessage(
                    b ->
                        b.queueUrl(q.get("fifo"))
                            .messageBody("f-" + n)
                            .messageGroupId("g1")
                            .messageDeduplicationId(dedups[n]));
            if (i != 2) {
              check(
                  r.sequenceNumber() != null && r.sequenceNumber().matches("\\d+"),
                  "SequenceNumber " + r);
              seqs.add(new BigInteger(r.sequenceNumber()));
            }
          }
          check(
              seqs.get(0).compareTo(seqs.get(1)) < 0 && seqs.get(1).compareTo(seqs.get(2)) < 0,
              "increasing " + seqs);
          // A second group interleaved: each group keeps its own order.
          for (String body : List.of("h-0", "h-1")) {
            sqs.sendMessage(
                b ->
                    b.queueUrl(q.get("fifo"))
                        .messageBody(body)
                        .messageGroupId("g2")
                        .messageDeduplicationId(body));
          }
          Map<String, List<String>> byGroup = new TreeMap<>();
          for (int round = 0; round < 10; round++) {
            List<Message> msgs = receive(q.get("fifo"), 0);
            if (msgs.isEmpty()) {
              break;
            }
            for (Message m : msgs) {
              String group = m.attributesAsStrings().get("MessageGroupId");
              check(
                  m.attributesAsStrings().getOrDefault("SequenceNumber", "").matches("\\d+"),
                  "received SequenceNumber");
              byGroup.computeIfAbsent(group, g -> new ArrayList<>()).add(m.body());
              sqs.deleteMessage(b -> b.queueUrl(q.get("fifo")).receiptHandle(m.receiptHandle()));
            }
          }
          assertEq(
              byGroup,
              Map.of("g1", List.of("f-0", "f-1", "f-3"), "g2", List.of("h-0", "h-1")),
              "FIFO bodies in order per group, duplicate dropped");
        });
    s.step(
        "dead-letter redrive",
        () -> {
          q.put("dlq", createQueue("dlq", Map.of()));
          String policy =
              "{\"deadLetterTargetArn\":\"" + arn(q.get("dlq")) + "\",\"maxReceiveCount\":1}";
          q.put(
              "src", createQueue("src", Map.of("VisibilityTimeout", "0", "RedrivePolicy", policy)));
          SendMessageResponse sent =
              sqs.sendMessage(b -> b.queueUrl(q.get("src")).messageBody("poison"));
          assertEq(
              receive(q.get("src"), 0).stream().map(Message::body).toList(),
              List.of("poison"),
              "first receive");
          assertEq(receive(q.get("src"), 0).size(), 0, "second receive moves it");
          List<Message> moved = receive(q.get("dlq"), 2);
          assertEq(
              moved.stream().map(m -> m.body() + "/" + m.messageId()).toList(),
              List.of("poison/" + sent.messageId()),
              "message in DLQ");
          assertEq(
              sqs.listDeadLetterSourceQueues(b -> b.queueUrl(q.get("dlq"))).queueUrls(),
              List.of(q.get("src")),
              "ListDeadLetterSourceQueues");
        });
    s.step(
        "tags",
        () -> {
          sqs.tagQueue(b -> b.queueUrl(q.get("std")).tags(Map.of("env", "test", "team", "core")));
          assertEq(
              sqs.listQueueTags(b -> b.queueUrl(q.get("std"))).tags(),
              Map.of("env", "test", "team", "core"),
              "tags");
          sqs.untagQueue(b -> b.queueUrl(q.get("std")).tagKeys("team"));
          assertEq(
              sqs.listQueueTags(b -> b.queueUrl(q.get("std"))).tags(),
              Map.of("env", "test"),
              "tags after untag");
        });
    s.step(
        "purge",
        () -> {
          for (int i = 0; i < 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(q.get("std")).messageBody("purge-" + n));
          }
          sqs.purgeQueue(b -> b.queueUrl(q.get("std")));
          assertEq(receive(q.get("std"), 0).size(), 0, "after purge");
          assertEq(
              sqs.getQueueAttributes(
                      b ->
                          b.queueUrl(q.get("std"))
                              .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                  .attributesAsStrings(),
              Map.of("ApproximateNumberOfMessages", "0"),
              "count after purge");
        });
    s.step(
        "queue attributes",
        () -> {
          Map<String, String> a =
              sqs.getQueueAttributes(
                      b -> b.queueUrl(q.get("std")).attributeNames(QueueAttributeName.ALL))
                  .attributesAsStrings();
          for (String k :
              List.of(
                  "QueueArn",
                  "CreatedTimestamp",
                  "LastModifiedTimestamp",
                  "DelaySeconds",
                  "MaximumMessageSize",
                  "MessageRetentionPeriod",
                  "ReceiveMessageWaitTimeSeconds",
                  "VisibilityTimeout")) {
            check(a.containsKey(k), k + " in " + a);
          }
          assertEq(
              a.get("QueueArn"),
              "arn:aws:sqs:us-east-1:000000000000:" + prefix + "-std",
              "QueueArn");
          assertEq(a.get("VisibilityTimeout"), "30", "default VisibilityTimeout");
          sqs.setQueueAttributes(
              b ->
                  b.queueUrl(q.get("std"))
                      .attributesWithStrings(
                          Map.of("VisibilityTimeout", "45", "MessageRetentionPeriod", "3600")));
          assertEq(
              sqs.getQueueAttributes(
                      b ->
                          b.queueUrl(q.get("std"))
                              .attributeNames(
                                  QueueAttributeName.VISIBILITY_TIMEOUT,
                                  QueueAttributeName.MESSAGE_RETENTION_PERIOD))
                  .attributesAsStrings(),
              Map.of("VisibilityTimeout", "45", "MessageRetentionPeriod", "3600"),
              "attributes after set");
          Map<String, String> f =
              sqs.getQueueAttributes(
                      b -> b.queueUrl(q.get("fifo")).attributeNames(QueueAttributeName.ALL))
                  .attributesAsStrings();
          assertEq(
              List.of(f.get("FifoQueue"), f.get("ContentBasedDeduplication")),
              List.of("true", "false"),
              "FIFO attributes");
        });
    s.step(
        "missing queue error",
        () -> {
          try {
            sqs.getQueueUrl(b -> b.queueName(prefix + "-does-not-exist"));
            throw new AssertionError("GetQueueUrl of a missing queue succeeded");
          } catch (QueueDoesNotExistException e) {
            assertEq(e.awsErrorDetails().errorCode(), NON_EXISTENT, "error code");
            assertEq(e.statusCode(), 400, "HTTP status");
            System.out.println(
                "       caught QueueDoesNotExistException: " + e.awsErrorDetails().errorCode());
          }
        });
    s.step(
        "validation errors",
        () -> {
          try {
            sqs.receiveMessage(b -> b.queueUrl(q.get("std")).maxNumberOfMessages(11));
            throw new AssertionError("MaxNumberOfMessages 11 accepted");
          } catch (SqsException e) {
            assertEq(e.awsErrorDetails().errorCode(), "InvalidParameterValue", "error code");
            assertEq(e.statusCode(), 400, "HTTP status");
            check(e.awsErrorDetails().errorMessage() != null, "a message");
          }
          List<SendMessageBatchRequestEntry> eleven =
              IntStream.range(0, 11)
                  .mapToObj(
                      i ->
                          SendMessageBatchRequestEntry.builder()
                              .id("e" + i)
                              .messageBody("x")
                              .build())
                  .toList();
          try {
            sqs.sendMessageBatch(b -> b.queueUrl(q.get("std")).entries(eleven));
            throw new AssertionError("a batch of 11 accepted");
          } catch (TooManyEntriesInBatchRequestException e) {
            assertEq(
                e.awsErrorDetails().errorCode(),
                "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
                "error code");
            assertEq(e.statusCode(), 400, "HTTP status");
          }
        });
    if (async != null) {
      s.step(
          "async: parked polls + sends",
          () -> {
            String url = q.get("std");
            Set<String> seen = ConcurrentHashMap.newKeySet();
            List<String> dupes = new ArrayList<>();
            List<CompletableFuture<Void>> polls = new ArrayList<>();
            for (int p = 0; p < 3; p++) {
              polls.add(pollUntil(url, seen, dupes, 20, System.nanoTime() + 15_000_000_000L));
            }
            CompletableFuture.allOf(
                    IntStream.range(0, 20)
                        .mapToObj(
                            i -> async.sendMessage(b -> b.queueUrl(url).messageBody("par-" + i)))
                        .toArray(CompletableFuture[]::new))
                .join();
            CompletableFuture.allOf(polls.toArray(CompletableFuture[]::new)).join();
            assertEq(seen.size(), 20, "distinct messages received");
            assertEq(dupes, List.of(), "received twice");
          });
    }
    s.step(
        "delete queues",
        () -> {
          for (String url : List.of(q.get("std"), q.get("fifo"), q.get("dlq"), q.get("src"))) {
            sqs.deleteQueue(b -> b.queueUrl(url));
          }
          assertEq(
              sqs.listQueues(b -> b.queueNamePrefix(prefix)).queueUrls(), List.of(), "queues left");
          try {
            sqs.getQueueAttributes(
                b -> b.queueUrl(q.get("std")).attributeNames(QueueAttributeName.ALL));
            throw new AssertionError("deleted queue still answers");
          } catch (QueueDoesNotExistException expected) {
            // as AWS
          }
        });
    s.step("protocol evidence", () -> recorder.check(name, protocol));
    return s;
  }

  /** Long polls (async) until {@code total} distinct messages were seen or the deadline. */
  private CompletableFuture<Void> pollUntil(
      String url, Set<String> seen, List<String> dupes, int total, long deadline) {
    if (seen.size() >= total || System.nanoTime() > deadline) {
      return CompletableFuture.completedFuture(null);
    }
    return async
        .receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(2))
        .thenCompose(
            (ReceiveMessageResponse r) -> {
              List<CompletableFuture<?>> deletes = new ArrayList<>();
              for (Message m : r.messages()) {
                if (!seen.add(m.messageId())) {
                  synchronized (dupes) {
                    dupes.add(m.body());
                  }
                }
                deletes.add(
                    async.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle())));
              }
              return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
            })
        .thenCompose(v -> pollUntil(url, seen, dupes, total, deadline));
  }
}
