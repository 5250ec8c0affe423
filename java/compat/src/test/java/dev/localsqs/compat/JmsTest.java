package dev.localsqs.compat;

import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.localsqs.compat.jms.JmsScenario;
import dev.localsqs.junit.LocalSqs;
import java.net.URI;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * JMS producer and consumers through amazon-sqs-java-messaging-lib; the steps of {@link
 * JmsScenario}.
 */
@LocalSqs(reset = false)
class JmsTest {
  private static JmsScenario scenario;

  @TestFactory
  Stream<DynamicTest> jms(URI endpoint) {
    scenario = new JmsScenario("junit-jms", endpoint);
    return scenario.scenario().steps().stream()
        .map(step -> dynamicTest(step.title(), () -> step.body().run()));
  }

  @AfterAll
  static void close() throws Exception {
    if (scenario != null) {
      scenario.close();
    }
  }
}
