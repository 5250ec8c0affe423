package dev.localsqs.compat;

import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.localsqs.compat.sdk.SdkScenario;
import dev.localsqs.junit.LocalSqs;
import dev.localsqs.junit.LocalSqsServer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The compatibility scenario's steps (tests/compat) with the AWS SDK for Java 2.x, sync and async
 * clients, each step a test, on one server for the class. The steps depend on each other (the
 * queues of the first), so the server is not reset between them.
 */
@LocalSqs(reset = false)
class SdkScenarioTest {
  private static final List<SdkScenario> OPEN = new ArrayList<>();

  private static Stream<DynamicTest> steps(SdkScenario scenario) {
    OPEN.add(scenario);
    return scenario.scenario().steps().stream()
        .map(step -> dynamicTest(step.title(), () -> step.body().run()));
  }

  @TestFactory
  Stream<DynamicTest> syncClient(LocalSqsServer server) {
    return steps(new SdkScenario("junit-sync", server.endpoint(), false, "json"));
  }

  @TestFactory
  Stream<DynamicTest> asyncClient(LocalSqsServer server) {
    return steps(new SdkScenario("junit-async", server.endpoint(), true, "json"));
  }

  @AfterAll
  static void close() {
    OPEN.forEach(SdkScenario::close);
  }
}
