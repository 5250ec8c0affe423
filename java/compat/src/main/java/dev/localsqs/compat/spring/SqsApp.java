package dev.localsqs.compat.spring;

import dev.localsqs.compat.Recorder;
import io.awspring.cloud.autoconfigure.sqs.SqsAsyncClientCustomizer;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application with Spring Cloud AWS SQS listeners ({@link Listeners}), as a user
 * would write it; only {@code spring.cloud.aws.sqs.endpoint}, the region and dummy credentials
 * point it at localsqs. The one addition is the {@link Recorder} on the auto-configured {@code
 * SqsAsyncClient}, for the protocol evidence.
 */
@SpringBootApplication
public class SqsApp {

  /** The requests the application's SQS client sent. */
  @Bean
  Recorder recorder() {
    return new Recorder();
  }

  /** Attaches the recorder to the client Spring Cloud AWS builds. */
  @Bean
  SqsAsyncClientCustomizer recordingCustomizer(Recorder recorder) {
    return builder -> builder.overrideConfiguration(o -> o.addExecutionInterceptor(recorder));
  }
}
