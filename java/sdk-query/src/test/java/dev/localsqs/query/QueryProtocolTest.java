package dev.localsqs.query;

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
 * compat's SDK scenario on an AWS SDK for Java 2.x release that speaks the Query protocol (form
 * bodies, XML answers): every request must be Query, and every step must pass as it does on JSON.
 */
@LocalSqs(reset = false)
class QueryProtocolTest {
  private static final List<SdkScenario> OPEN = new ArrayList<>();

  private static Stream<DynamicTest> steps(SdkScenario scenario) {
    OPEN.add(scenario);
    return scenario.scenario().steps().stream()
        .map(step -> dynamicTest(step.title(), () -> step.body().run()));
  }

  @TestFactory
  Stream<DynamicTest> syncClient(LocalSqsServer server) {
    return steps(new SdkScenario("junit-query-sync", server.endpoint(), false, "query"));
  }

  @TestFactory
  Stream<DynamicTest> asyncClient(LocalSqsServer server) {
    return steps(new SdkScenario("junit-query-async", server.endpoint(), true, "query"));
  }

  @AfterAll
  static void close() {
    OPEN.forEach(SdkScenario::close);
  }
}
