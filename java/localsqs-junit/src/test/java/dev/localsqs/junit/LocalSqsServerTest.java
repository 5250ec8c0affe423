package dev.localsqs.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.PurgeQueueInProgressException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** The launcher on its own: start, options, admin endpoints and their token, stop. */
class LocalSqsServerTest {

  @Test
  void startsOnAFreePortAndStopsOnSigterm() throws IOException {
    LocalSqsServer server = LocalSqsServer.start();
    int port = server.port();
    try {
      assertTrue(server.isRunning());
      assertEquals("http://127.0.0.1:" + port, server.endpoint().toString());
      assertTrue(server.health().contains("\"ready\":true"), server.health());
      String url = server.client().createQueue(b -> b.queueName("jobs")).queueUrl();
      assertEquals(server.queueUrl("jobs"), url);
      assertTrue(server.pid() > 0);
    } finally {
      assertEquals(0, server.stop(), "exit code after SIGTERM; log:\n" + server.output());
    }
    assertFalse(server.isRunning());
    assertEquals(-1, server.stop(), "a second stop is a no-op");
    assertThrows(ConnectException.class, () -> new Socket("127.0.0.1", port).close());
    assertThrows(LocalSqsException.class, server::health);
    assertFalse(server.output().isEmpty(), "the log of the stopped process is kept");
  }

  @Test
  void twoServersAtOnceGetTwoPorts() {
    try (LocalSqsServer a = LocalSqsServer.start();
        LocalSqsServer b = LocalSqsServer.start()) {
      assertTrue(a.port() != b.port());
      a.client().createQueue(r -> r.queueName("only-in-a"));
      assertEquals(List.of(), b.client().listQueues().queueUrls());
    }
  }

  @Test
  void resetDropsQueuesAndConfigQueuesComeBack(@TempDir Path dir) throws IOException {
    Path config = dir.resolve("queues.toml");
    Files.writeString(
        config, "[[queue]]\nname = \"declared\"\nattributes = { VisibilityTimeout = 45 }\n");
    try (LocalSqsServer server = LocalSqsServer.builder().config(config).start()) {
      SqsClient sqs = server.client();
      sqs.createQueue(b -> b.queueName("made-in-test"));
      assertEquals(2, sqs.listQueues().queueUrls().size());
      server.reset();
      assertEquals(List.of(server.queueUrl("declared")), sqs.listQueues().queueUrls());
      String timeout =
          sqs.getQueueAttributes(
                  b ->
                      b.queueUrl(server.queueUrl("declared"))
                          .attributeNames(QueueAttributeName.VISIBILITY_TIMEOUT))
              .attributes()
              .get(QueueAttributeName.VISIBILITY_TIMEOUT);
      assertEquals("45", timeout);
    }
  }

  @Test
  void regionAndAccountReachQueueUrlsArnsAndClients() {
    try (LocalSqsServer server =
        LocalSqsServer.builder().region("eu-west-1").accountId("111111111111").start()) {
      assertEquals("eu-west-1", server.region());
      String url = server.client().createQueue(b -> b.queueName("orders")).queueUrl();
      assertEquals(server.endpoint() + "/111111111111/orders", url);
      String arn =
          server
              .client()
              .getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
              .attributes()
              .get(QueueAttributeName.QUEUE_ARN);
      assertEquals("arn:aws:sqs:eu-west-1:111111111111:orders", arn);
    }
  }

  @Test
  void dataDirKeepsStateAcrossRestart(@TempDir Path dir) {
    Path data = dir.resolve("state");
    try (LocalSqsServer server = LocalSqsServer.builder().dataDir(data).start()) {
      String url = server.client().createQueue(b -> b.queueName("durable")).queueUrl();
      server.client().sendMessage(b -> b.queueUrl(url).messageBody("kept"));
      int port = server.port();
      server.restart();
      assertEquals(port, server.port(), "restart keeps the port");
      assertTrue(server.health().contains("\"mode\":\"durable\""), server.health());
      assertEquals(
          "kept",
          server.client().receiveMessage(b -> b.queueUrl(url)).messages().get(0).body(),
          "a client made before the restart still works");
    }
    assertTrue(Files.isDirectory(data));
  }

  @Test
  void extraArgsAndClock() {
    try (LocalSqsServer server = LocalSqsServer.builder().args("--enforce-cooloffs").start()) {
      SqsClient sqs = server.client();
      String url = sqs.createQueue(b -> b.queueName("purged")).queueUrl();
      sqs.purgeQueue(b -> b.queueUrl(url));
      assertThrows(PurgeQueueInProgressException.class, () -> sqs.purgeQueue(b -> b.queueUrl(url)));
      String clock = server.advanceClock(Duration.ofSeconds(61));
      assertTrue(clock.contains("\"offset_ms\":61000"), clock);
      sqs.purgeQueue(b -> b.queueUrl(url)); // the 60-second cool-off passed on the server's clock
      assertThrows(
          IllegalArgumentException.class, () -> server.advanceClock(Duration.ofSeconds(-1)));
    }
  }

  /**
   * Sends {@code POST /_localsqs/reset} past the launcher, with no credentials or with {@code
   * authorization}, and returns the status: 401 proves the server is guarded.
   */
  static int rawReset(LocalSqsServer server, String authorization)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(server.endpoint().resolve("/_localsqs/reset"))
            .timeout(Duration.ofSeconds(10))
            .POST(HttpRequest.BodyPublishers.noBody());
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    HttpClient http = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
    return http.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void adminTokenGuardsTheServerAndIsSentWithAdminCalls() throws Exception {
    try (LocalSqsServer server = LocalSqsServer.builder().adminToken("s3cret").start()) {
      assertEquals(Optional.of("s3cret"), server.adminToken());
      assertEquals(401, rawReset(server, null), "the server is guarded");
      assertEquals(401, rawReset(server, "Bearer wrong"));
      assertEquals(200, rawReset(server, "Bearer s3cret"));
      SqsClient sqs = server.client();
      sqs.createQueue(b -> b.queueName("dropped"));
      server.reset();
      assertEquals(List.of(), sqs.listQueues().queueUrls());
      String clock = server.advanceClock(Duration.ofSeconds(5));
      assertTrue(clock.contains("\"offset_ms\":5000"), clock);
      assertTrue(server.health().contains("\"ready\":true"), server.health());
    }
  }

  @Test
  void adminTokenGivenAsAnExtraArgumentIsSentToo() throws Exception {
    List<String[]> forms =
        List.of(
            new String[] {"--admin-token", "from-args"}, new String[] {"--admin-token=from-args"});
    for (String[] args : forms) {
      try (LocalSqsServer server = LocalSqsServer.builder().args(args).start()) {
        assertEquals(Optional.of("from-args"), server.adminToken(), String.join(" ", args));
        assertEquals(401, rawReset(server, null), "the server is guarded");
        server.reset();
        String clock = server.advanceClock(Duration.ofSeconds(2));
        assertTrue(clock.contains("\"offset_ms\":2000"), clock);
      }
    }
  }

  @Test
  void adminTokenFromTheServersEnvironmentIsSentToo() throws Exception {
    try (LocalSqsServer server =
        LocalSqsServer.builder().env(LocalSqsServer.ADMIN_TOKEN_ENV, "from-env").start()) {
      assertEquals(Optional.of("from-env"), server.adminToken());
      assertEquals(401, rawReset(server, null), "the server is guarded");
      server.reset();
    }
  }

  @Test
  void adminTokenIsTheOneTheServerUses() {
    Map<String, String> env = Map.of(LocalSqsServer.ADMIN_TOKEN_ENV, "env");
    List<String> args = List.of("--admin-token", "args");
    assertEquals("explicit", AdminTokens.resolve("explicit", args, env));
    assertEquals("args", AdminTokens.resolve(null, args, env));
    assertEquals("env", AdminTokens.resolve(null, List.of(), env));
    assertEquals(null, AdminTokens.resolve(null, List.of(), Map.of()));
    assertEquals(
        null,
        AdminTokens.resolve(null, List.of("--admin-token="), env),
        "an empty --admin-token wins over the variable and means none");
    assertEquals(
        null, AdminTokens.resolve(null, List.of(), Map.of(LocalSqsServer.ADMIN_TOKEN_ENV, "")));
    assertEquals(
        "env",
        AdminTokens.resolve(null, List.of("--", "--admin-token=x"), env),
        "nothing after -- is an option");
  }

  @Test
  void anAdminTokenGivenTwiceIsRefusedAndTokensStayOutOfErrors(@TempDir Path dir)
      throws IOException {
    LocalSqsException twice =
        assertThrows(
            LocalSqsException.class,
            () -> LocalSqsServer.builder().adminToken("a").args("--admin-token=b").start());
    assertTrue(twice.getMessage().contains("given twice"), twice.getMessage());
    Path config = dir.resolve("bad.toml");
    Files.writeString(
        config, "[[queue]]\nname = \"bad\"\nattributes = { VisibilityTimeout = -5 }\n");
    LocalSqsException e =
        assertThrows(
            LocalSqsException.class,
            () -> LocalSqsServer.builder().config(config).adminToken("hidden-token").start());
    assertTrue(e.getMessage().contains("--admin-token ***"), e.getMessage());
    assertFalse(e.getMessage().contains("hidden-token"), e.getMessage());
  }

  @Test
  void aServerThatExitsAtStartReportsItsOutput(@TempDir Path dir) throws IOException {
    Path config = dir.resolve("bad.toml");
    Files.writeString(
        config, "[[queue]]\nname = \"bad\"\nattributes = { VisibilityTimeout = -5 }\n");
    LocalSqsException e =
        assertThrows(
            LocalSqsException.class, () -> LocalSqsServer.builder().config(config).start());
    assertTrue(e.getMessage().contains("exited with code"), e.getMessage());
    assertTrue(e.getMessage().contains("VisibilityTimeout"), e.getMessage());
  }

  @Test
  void findBinaryExplainsWhatWasTried(@TempDir Path dir) throws IOException {
    Path notExecutable = Files.writeString(dir.resolve("localsqs"), "");
    LocalSqsException e =
        assertThrows(LocalSqsException.class, () -> LocalSqsServer.findBinary(notExecutable));
    assertTrue(e.getMessage().contains("not an executable file"), e.getMessage());
    Path found = LocalSqsServer.findBinary(null);
    assertTrue(Files.isExecutable(found), found.toString());
  }
}
