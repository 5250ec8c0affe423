package dev.localsqs.compat.jms;

import java.net.URI;

/**
 * Runs {@link JmsScenario} for tests/compat/run.sh.
 *
 * <pre>
 * java -cp ... dev.localsqs.compat.jms.JmsMain --endpoint http://127.0.0.1:PORT --name jms
 * </pre>
 */
public final class JmsMain {
  private JmsMain() {}

  /**
   * The entry point.
   *
   * @param args {@code --endpoint URL --name NAME}
   * @throws Exception if closing the connection fails
   */
  public static void main(String[] args) throws Exception {
    java.util.Map<String, String> opts = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String name = opts.getOrDefault("name", "jms");
    System.out.println(
        name
            + ": amazon-sqs-java-messaging-lib "
            + libraryVersion()
            + " (JMS 3.1, jakarta.jms), protocol expected JSON");
    JmsScenario scenario = new JmsScenario(name, URI.create(opts.get("endpoint")));
    int code = scenario.scenario().runAndPrint().isEmpty() ? 0 : 1;
    scenario.close();
    System.exit(code);
  }

  /** The library's version, from the Maven metadata in its jar (its manifest has none). */
  private static String libraryVersion() {
    String resource = "/META-INF/maven/com.amazonaws/amazon-sqs-java-messaging-lib/pom.properties";
    try (java.io.InputStream in =
        com.amazon.sqs.javamessaging.SQSConnectionFactory.class.getResourceAsStream(resource)) {
      java.util.Properties p = new java.util.Properties();
      if (in != null) {
        p.load(in);
      }
      return p.getProperty("version", "(unknown version)");
    } catch (java.io.IOException e) {
      return "(unknown version)";
    }
  }
}
