package dev.localsqs.compat.sdk;

import java.net.URI;
import software.amazon.awssdk.core.util.SdkUserAgent;

/**
 * Runs {@link SdkScenario} for tests/compat/run.sh:
 *
 * <pre>
 * java -cp ... dev.localsqs.compat.sdk.SdkMain --endpoint http://127.0.0.1:PORT --name java-sdk2 \
 *     --client sync|async --protocol json|query
 * </pre>
 */
public final class SdkMain {
  private SdkMain() {}

  /**
   * The entry point.
   *
   * @param args {@code --endpoint URL --name NAME --client sync|async --protocol json|query}
   */
  public static void main(String[] args) {
    java.util.Map<String, String> opts = new java.util.HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String name = opts.getOrDefault("name", "java-sdk2");
    boolean async = opts.getOrDefault("client", "sync").equals("async");
    String protocol = opts.getOrDefault("protocol", "json");
    System.out.println(
        name
            + ": AWS SDK for Java "
            + SdkUserAgent.create().userAgent().split(" ")[0]
            + ", "
            + (async ? "SqsAsyncClient" : "SqsClient")
            + ", Java "
            + System.getProperty("java.version")
            + ", protocol expected "
            + protocol.toUpperCase(java.util.Locale.ROOT));
    SdkScenario scenario = new SdkScenario(name, URI.create(opts.get("endpoint")), async, protocol);
    int code = scenario.scenario().runAndPrint().isEmpty() ? 0 : 1;
    scenario.close();
    System.exit(code);
  }
}
