package dev.localsqs.compat.spring;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Runs {@link SpringScenario} for tests/compat/run.sh: creates the queues, starts {@link SqsApp}
 * pointed at the server, runs the steps, closes the application.
 *
 * <pre>
 * java -cp ... dev.localsqs.compat.spring.SpringMain --endpoint http://127.0.0.1:PORT --name spring-cloud-aws
 * </pre>
 */
public final class SpringMain {
  private SpringMain() {}

  /**
   * The entry point.
   *
   * @param args {@code --endpoint URL --name NAME}
   */
  public static void main(String[] args) {
    Map<String, String> opts = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String name = opts.getOrDefault("name", "spring-cloud-aws");
    URI endpoint = URI.create(opts.get("endpoint"));
    String prefix = "compat-" + name + "-" + ProcessHandle.current().pid() + "-";
    System.out.println(
        name
            + ": Spring Boot "
            + SpringBootVersion.getVersion()
            + ", Spring Cloud AWS "
            + io.awspring.cloud.sqs.operations.SqsTemplate.class
                .getPackage()
                .getImplementationVersion()
            + ", protocol expected JSON");
    SpringScenario.createQueues(endpoint, prefix);
    List<String> argv = new ArrayList<>();
    SpringScenario.properties(endpoint, prefix).forEach((k, v) -> argv.add("--" + k + "=" + v));
    argv.add("--spring.main.banner-mode=off");
    argv.add("--logging.level.root=WARN");
    int code;
    try (ConfigurableApplicationContext context =
        SpringApplication.run(SqsApp.class, argv.toArray(String[]::new))) {
      SpringScenario scenario = new SpringScenario(name, endpoint, prefix).with(context);
      code = scenario.scenario().runAndPrint().isEmpty() ? 0 : 1;
      scenario.close();
    }
    System.exit(code);
  }
}
