package dev.localsqs.junit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The child process of one {@link LocalSqsServer}: launching it (on a free port, retried if another
 * process takes the port first) with its output captured in a log file, waiting until it is
 * healthy, stopping it (SIGTERM, then a kill), and the shutdown hook that stops the servers still
 * running when the JVM exits. Launches and stops run under the server's lock; the getters may be
 * called without it.
 */
final class ServerProcess {

  private static final Set<LocalSqsServer> LIVE = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (LocalSqsServer server : List.copyOf(LIVE)) {
                    server.stop(Duration.ofSeconds(5));
                  }
                },
                "localsqs-shutdown"));
  }

  private final LocalSqsServer owner;
  private final ServerOptions options;
  private final Path binary;
  private final AdminHttp http;
  private Process process;
  private Path log;
  private int port;
  private volatile String lastOutput = "";
  private volatile String adminToken; // what admin calls send, null for none

  ServerProcess(LocalSqsServer owner, ServerOptions options, Path binary, AdminHttp http) {
    this.owner = owner;
    this.options = options;
    this.binary = binary;
    this.http = http;
  }

  /** The running process, or null before the first launch and after a stop. */
  Process process() {
    return process;
  }

  /** The port of the last launch. */
  int port() {
    return port;
  }

  /** The admin token the server requires, or null for none. */
  String adminToken() {
    return adminToken;
  }

  /** Launches the server on {@code requestedPort} (0 for a free one) and waits until healthy. */
  void launch(int requestedPort) {
    // A port picked here may be taken by someone else before the child binds it: retry with
    // another one when we chose it and the child failed to bind.
    int attempts = requestedPort == 0 ? 3 : 1;
    for (int attempt = 1; ; attempt++) {
      int candidate =
          requestedPort == 0 ? LocalSqsServer.freePort(options.connectHost()) : requestedPort;
      try {
        launchOnce(candidate);
        return;
      } catch (LocalSqsException e) {
        if (attempt >= attempts
            || !e.getMessage().toLowerCase(Locale.ROOT).contains("address already in use")) {
          throw e;
        }
      }
    }
  }

  private void launchOnce(int candidatePort) {
    List<String> command = options.command(binary, candidatePort);
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    options.prepareEnvironment(env);
    adminToken = AdminTokens.resolve(options.adminToken, options.extraArgs, env);
    try {
      if (options.dataDir != null) {
        Files.createDirectories(options.dataDir);
      }
      log = Files.createTempFile("localsqs-", ".log");
      log.toFile().deleteOnExit();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    try {
      process = pb.start();
      process.getOutputStream().close(); // no standard input
    } catch (IOException e) {
      throw new LocalSqsException("cannot run the localsqs binary " + binary + ": " + e, e);
    }
    port = candidatePort;
    LIVE.add(owner);
    try {
      http.awaitHealthy(
          process,
          options.endpoint(port),
          options.startupTimeout,
          () -> shownCommand(port),
          this::output);
    } catch (RuntimeException e) {
      terminate(Duration.ofSeconds(5));
      throw e;
    }
  }

  /** The command line for error messages: admin tokens are replaced by {@code ***}. */
  private String shownCommand(int candidatePort) {
    return AdminTokens.masked(options.command(binary, candidatePort));
  }

  /**
   * Stops the process: SIGTERM, then a kill after {@code timeout}; keeps its output.
   *
   * @return its exit code, or -1 if it was not running
   */
  int terminate(Duration timeout) {
    Process p = process;
    process = null;
    LIVE.remove(owner);
    if (p == null) {
      return -1;
    }
    p.destroy(); // SIGTERM: the server answers parked long polls and finishes open requests
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        p.waitFor();
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    lastOutput = readLog();
    try {
      Files.deleteIfExists(log);
    } catch (IOException ignored) {
      // a temporary file; deleteOnExit is the fallback
    }
    log = null;
    return p.isAlive() ? -1 : p.exitValue();
  }

  /** What the process has written so far; after a stop, what the stopped process wrote. */
  String output() {
    return log == null ? lastOutput : readLog();
  }

  private String readLog() {
    Path l = log;
    if (l == null) {
      return lastOutput;
    }
    try {
      return Files.readString(l, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return lastOutput;
    }
  }
}
