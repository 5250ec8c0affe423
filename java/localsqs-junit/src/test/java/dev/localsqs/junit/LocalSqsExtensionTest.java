package dev.localsqs.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.testkit.engine.EngineTestKit;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The extension, driven through JUnit's EngineTestKit: injection, reset between tests, one server
 * per class, one per run, an admin token.
 */
class LocalSqsExtensionTest {

  /** Servers seen by the classes run below, in order. */
  static final List<LocalSqsServer> SEEN = new ArrayList<>();

  @ExtendWith(LocalSqsExtension.class)
  @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
  static class Injection {
    static LocalSqsServer staticServer;
    URI endpoint;
    SqsClient sqs;

    @BeforeAll
    static void beforeAll(LocalSqsServer server, SqsClient client) {
      assertSame(server, staticServer, "static field injected before @BeforeAll");
      client.createQueue(b -> b.queueName("made-in-before-all"));
    }

    @Test
    @Order(1)
    void parametersAndFields(
        LocalSqsServer server, URI uri, SqsClient client, SqsAsyncClient async) {
      SEEN.add(server);
      assertEquals(server.endpoint(), uri);
      assertEquals(uri, endpoint);
      assertSame(server.client(), client);
      assertSame(client, sqs);
      assertSame(server.asyncClient(), async);
      assertEquals(List.of(), client.listQueues().queueUrls(), "reset before each test");
      client.createQueue(b -> b.queueName("made-in-test-1"));
    }

    @Test
    @Order(2)
    void stateIsResetBetweenTests() {
      assertEquals(List.of(), sqs.listQueues().queueUrls());
    }

    @Nested
    class Inner {
      @Test
      void nestedClassesShareTheServer(LocalSqsServer server) {
        assertSame(staticServer, server);
      }
    }
  }

  @LocalSqs(reset = false, region = "eu-west-2", accountId = "222222222222")
  @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
  static class NoReset {
    @Test
    @Order(1)
    void first(LocalSqsServer server, SqsClient sqs) {
      SEEN.add(server);
      String url = sqs.createQueue(b -> b.queueName("kept")).queueUrl();
      assertEquals(server.endpoint() + "/222222222222/kept", url);
    }

    @Test
    @Order(2)
    void second(SqsClient sqs) {
      assertEquals(1, sqs.listQueues().queueUrls().size(), "no reset between tests");
    }
  }

  @LocalSqs(perClass = false)
  static class SharedA {
    @Test
    void a(LocalSqsServer server) {
      SEEN.add(server);
    }
  }

  @LocalSqs(perClass = false)
  static class SharedB {
    @Test
    void b(LocalSqsServer server) {
      SEEN.add(server);
    }
  }

  @LocalSqs(adminToken = "ext-token")
  @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
  static class Guarded {
    @Test
    @Order(1)
    void resetAndClockSendTheToken(LocalSqsServer server, SqsClient sqs) throws Exception {
      SEEN.add(server);
      assertEquals(401, LocalSqsServerTest.rawReset(server, null), "the server is guarded");
      sqs.createQueue(b -> b.queueName("dropped-by-reset"));
      server.advanceClock(Duration.ofSeconds(1));
    }

    @Test
    @Order(2)
    void theResetBeforeThisTestWorked(SqsClient sqs) {
      assertEquals(List.of(), sqs.listQueues().queueUrls());
    }
  }

  @LocalSqs(args = {"--admin-token", "ext-args"})
  static class GuardedByArgs {
    @Test
    void resetSendsTheArgumentsToken(LocalSqsServer server) throws Exception {
      SEEN.add(server);
      assertEquals(401, LocalSqsServerTest.rawReset(server, null), "the server is guarded");
      server.reset();
    }
  }

  private static void run(Class<?>... classes) {
    SEEN.clear();
    var request = EngineTestKit.engine("junit-jupiter");
    for (Class<?> c : classes) {
      request.selectors(selectClass(c));
    }
    var all = request.execute().allEvents();
    all.failed().stream().forEach(e -> System.out.println("failed: " + e));
    all.assertStatistics(s -> s.failed(0).aborted(0));
    assertTrue(all.succeeded().count() > classes.length, all.list().toString());
  }

  @Test
  void injectsAndResets() {
    run(Injection.class);
    assertEquals(1, SEEN.size());
    assertFalse(SEEN.get(0).isRunning(), "the class's server stops after the class");
  }

  @Test
  void optionsAndNoReset() {
    run(NoReset.class);
    assertEquals("eu-west-2", SEEN.get(0).region());
  }

  @Test
  void perClassServersDifferAndSharedOnesAreOne() {
    run(Injection.class, NoReset.class, SharedA.class, SharedB.class);
    assertEquals(4, SEEN.size());
    assertNotEquals(SEEN.get(0).port(), SEEN.get(1).port());
    assertSame(SEEN.get(2), SEEN.get(3), "perClass = false: one server for the run");
    assertNotNull(SEEN.get(2).binary());
    assertFalse(SEEN.get(3).isRunning(), "stopped when the run ends");
  }

  @Test
  void adminTokenFromTheAnnotationOrTheArguments() {
    run(Guarded.class, GuardedByArgs.class);
    assertEquals(2, SEEN.size());
    assertEquals(Optional.of("ext-token"), SEEN.get(0).adminToken());
    assertEquals(Optional.of("ext-args"), SEEN.get(1).adminToken());
  }
}
