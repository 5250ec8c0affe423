package dev.localsqs.junit;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options of one server as its {@link LocalSqsServer.Builder} collected them, and what they
 * make: the command line, the child's environment, the endpoint to connect to, and the key under
 * which equal options share a server. {@link LocalSqsServer} keeps a copy taken at start, so later
 * changes to the builder do not reach a running server.
 */
final class ServerOptions {

  /**
   * Variables the binary reads for settings this launcher passes as flags. They are removed from
   * the child's environment so that a default server means "in memory, defaults" even in a shell
   * that exports, say, LOCALSQS_DATA_DIR for a long-running instance.
   */
  private static final List<String> MANAGED_ENV =
      List.of(
          "LOCALSQS_HOST",
          "LOCALSQS_PORT",
          "LOCALSQS_DATA_DIR",
          "LOCALSQS_REGION",
          "LOCALSQS_ACCOUNT_ID",
          "LOCALSQS_CONFIG");

  Path binary;
  String host = "127.0.0.1";
  int port;
  Path dataDir;
  Path config;
  String region;
  String accountId;
  String adminToken;
  final List<String> extraArgs = new ArrayList<>();
  final Map<String, String> env = new LinkedHashMap<>();
  Duration startupTimeout = Duration.ofSeconds(30);
  Duration stopTimeout = Duration.ofSeconds(10);

  ServerOptions copy() {
    ServerOptions b = new ServerOptions();
    b.binary = binary;
    b.host = host;
    b.port = port;
    b.dataDir = dataDir;
    b.config = config;
    b.region = region;
    b.accountId = accountId;
    b.adminToken = adminToken;
    b.extraArgs.addAll(extraArgs);
    b.env.putAll(env);
    b.startupTimeout = startupTimeout;
    b.stopTimeout = stopTimeout;
    return b;
  }

  /** A key naming these options, so that equal options can share one server. */
  String key() {
    return String.join(
        "\u0000",
        String.valueOf(binary),
        host,
        Integer.toString(port),
        String.valueOf(dataDir),
        String.valueOf(config),
        String.valueOf(region),
        String.valueOf(accountId),
        String.valueOf(adminToken),
        String.join("\u0001", extraArgs),
        env.toString());
  }

  /** The command line that runs {@code binary} with these options on {@code candidatePort}. */
  List<String> command(Path binary, int candidatePort) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary.toString());
    cmd.add("--host");
    cmd.add(host);
    cmd.add("--port");
    cmd.add(Integer.toString(candidatePort));
    if (dataDir != null) {
      cmd.add("--data-dir");
      cmd.add(dataDir.toString());
    }
    if (config != null) {
      cmd.add("--config");
      cmd.add(config.toString());
    }
    if (region != null) {
      cmd.add("--region");
      cmd.add(region);
    }
    if (accountId != null) {
      cmd.add("--account-id");
      cmd.add(accountId);
    }
    if (adminToken != null) {
      cmd.add(AdminTokens.FLAG);
      cmd.add(adminToken);
    }
    cmd.addAll(extraArgs);
    return cmd;
  }

  /**
   * Turns {@code childEnv}, a copy of this JVM's environment, into the child's: the variables
   * standing for flags removed, {@code NO_COLOR} set unless present, then the builder's variables.
   */
  void prepareEnvironment(Map<String, String> childEnv) {
    MANAGED_ENV.forEach(childEnv::remove);
    childEnv.putIfAbsent("NO_COLOR", "1"); // the log goes to a file, not a terminal
    childEnv.putAll(env);
  }

  /** The address clients connect to: a wildcard listening address becomes the loopback one. */
  String connectHost() {
    String h = host;
    if (h.equals("0.0.0.0") || h.isEmpty()) {
      return "127.0.0.1";
    }
    if (h.equals("::") || h.equals("[::]")) {
      return "::1";
    }
    return h;
  }

  /** The endpoint of a server listening on {@code port} with these options. */
  URI endpoint(int port) {
    String h = connectHost();
    if (h.contains(":")) {
      h = "[" + h + "]";
    }
    return URI.create("http://" + h + ":" + port);
  }
}
