package dev.localsqs.compat;

import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.localsqs.compat.spring.SpringScenario;
import dev.localsqs.compat.spring.SqsApp;
import dev.localsqs.junit.LocalSqs;
import dev.localsqs.junit.LocalSqsServer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A Spring Boot application with Spring Cloud AWS listeners, pointed at a localsqs server by
 * {@code @DynamicPropertySource}: the server is started by the extension before the context (its
 * static field is injected first), and the context is closed before the server stops
 * ({@code @DirtiesContext}). The steps are {@link SpringScenario}'s.
 */
@LocalSqs(reset = false)
@SpringBootTest(classes = SqsApp.class, webEnvironment = SpringBootTest.WebEnvironment.NONE)
@DirtiesContext
class SpringSqsTest {
  static final String PREFIX = "spring-";
  static LocalSqsServer sqs;

  @DynamicPropertySource
  static void sqsProperties(DynamicPropertyRegistry registry) {
    registry.add("spring.cloud.aws.sqs.endpoint", () -> sqs.endpoint().toString());
    SpringScenario.properties(sqs.endpoint(), PREFIX).forEach((k, v) -> registry.add(k, () -> v));
  }

  @BeforeAll
  static void queues() {
    // Before the context starts (the listeners resolve their queues at start-up).
    SpringScenario.createQueues(sqs.endpoint(), PREFIX);
  }

  @Autowired ConfigurableApplicationContext context;
  private static SpringScenario scenario;

  @TestFactory
  Stream<DynamicTest> springCloudAws() {
    scenario = new SpringScenario("junit-spring", sqs.endpoint(), PREFIX).with(context);
    return scenario.scenario().steps().stream()
        .map(step -> dynamicTest(step.title(), () -> step.body().run()));
  }

  @AfterAll
  static void close() {
    if (scenario != null) {
      scenario.close();
    }
  }
}
