package dev.localsqs.junit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A localsqs server (a local, wire-compatible Amazon SQS emulator) running in a child process.
 *
 * <p>Start one with {@link #start()} for the defaults, or {@link #builder()} for options, and stop
 * it with {@link #close()} (try-with-resources works):
 *
 * <pre>{@code
 * try (LocalSqsServer sqs = LocalSqsServer.builder().region("eu-west-1").start()) {
 *   SqsClient client = sqs.client();           // endpoint, region and dummy credentials set
 *   client.createQueue(b -> b.queueName("orders"));
 *   sqs.advanceClock(Duration.ofSeconds(30));  // visibility timeouts pass, no sleeping
 *   sqs.reset();                               // every queue and message dropped
 * }
 * }</pre>
 *
 * <p>The server listens on a free port of {@code 127.0.0.1} (unless told otherwise) and is ready
 * when {@link #start()} returns: the launcher waits for {@code GET /health}. The executable is
 * found as {@link #findBinary(Path)} describes. {@link #stop()} sends SIGTERM, waits, and kills the
 * process if it has not exited; servers still running when the JVM exits are stopped by a shutdown
 * hook.
 *
 * <p>A server that guards its admin endpoints with a token ({@code --admin-token}) gets it in every
 * admin call this class makes ({@link #reset()}, {@link #advanceClock(Duration)}, {@link
 * #admin(String, String, String)}): see {@link Builder#adminToken(String)}.
 *
 * <p>{@link #client()} and {@link #asyncClient()} need the AWS SDK for Java 2.x {@code sqs} module
 * on the class path; everything else uses the JDK alone. This class is thread-safe.
 */
public final class LocalSqsServer implements AutoCloseable {

  /** The environment variable naming the executable to run. */
  public static final String BINARY_ENV = "LOCALSQS_BIN";

  /** The system property naming the executable to run (takes precedence over the variable). */
  public static final String BINARY_PROPERTY = "localsqs.bin";

  /** The region the server uses unless told otherwise. */
  public static final String DEFAULT_REGION = "us-east-1";

  /** The account id the server uses unless told otherwise. */
  public static final String DEFAULT_ACCOUNT_ID = "000000000000";

  /**
   * The variable the server reads its admin token from when no {@code --admin-token} is given; the
   * launcher reads it too, from the environment the server process gets (see {@link
   * Builder#adminToken(String)}).
   */
  public static final String ADMIN_TOKEN_ENV = "LOCALSQS_ADMIN_TOKEN";

  private static final Pattern RESET_OK = Pattern.compile("\"reset\"\\s*:\\s*true");

  private final ServerOptions options;
  private final Path binary;
  private final AdminHttp http = new AdminHttp();
  private final ServerProcess child;
  private final Object lock = new Object();
  private Object clients; // SdkClients, created on first use; Object keeps the SDK optional

  private LocalSqsServer(ServerOptions options, Path binary) {
    this.options = options;
    this.binary = binary;
    this.child = new ServerProcess(this, options, binary, http);
  }

  /**
   * Starts a server with the default options: in memory, a free port, region {@value
   * #DEFAULT_REGION}, account {@value #DEFAULT_ACCOUNT_ID}.
   *
   * @return the running server
   * @throws LocalSqsException if the binary cannot be found or the server does not start
   */
  public static LocalSqsServer start() {
    return builder().start();
  }

  /**
   * Returns a builder of server options.
   *
   * @return a new builder with the defaults
   */
  public static Builder builder() {
    return new Builder();
  }

  // ------------------------------------------------------------------ life cycle

  /**
   * Stops the server: SIGTERM, then a kill after the builder's stop timeout (10 s by default).
   * Closes the clients made by {@link #client()} and {@link #asyncClient()}. Safe to call twice.
   *
   * @return the process's exit code, or -1 if it was not running
   */
  public int stop() {
    return stop(options.stopTimeout);
  }

  /**
   * Stops the server as {@link #stop()} does, waiting at most {@code timeout} before killing it.
   *
   * @param timeout how long to wait after SIGTERM
   * @return the process's exit code, or -1 if it was not running
   */
  public int stop(Duration timeout) {
    synchronized (lock) {
      closeClients();
      return child.terminate(timeout);
    }
  }

  /** Same as {@link #stop()}. */
  @Override
  public void close() {
    stop();
  }

  /**
   * Stops the server and starts it again with the same options on the same port (with a data
   * directory, its state survives). Clients made before keep working.
   */
  public void restart() {
    synchronized (lock) {
      if (child.process() == null) {
        throw new LocalSqsException("the server is not running");
      }
      int samePort = child.port();
      child.terminate(options.stopTimeout);
      child.launch(samePort);
    }
  }

  /**
   * Tells whether the server process is alive.
   *
   * @return true while the child process runs
   */
  public boolean isRunning() {
    Process p = child.process();
    return p != null && p.isAlive();
  }

  /**
   * Returns the server's process id.
   *
   * @return the child's pid
   * @throws LocalSqsException if the server is not running
   */
  public long pid() {
    Process p = child.process();
    if (p == null) {
      throw new LocalSqsException("the server is not running");
    }
    return p.pid();
  }

  /**
   * Returns everything the server has written to stdout and stderr so far (its log); after {@link
   * #stop()}, the log of the process that ran.
   *
   * @return the server's output
   */
  public String output() {
    return child.output();
  }

  // ------------------------------------------------------------------ addresses

  /**
   * Returns the server's endpoint, {@code http://127.0.0.1:<port>}: give it to an SDK's {@code
   * endpointOverride} or to {@code spring.cloud.aws.sqs.endpoint}.
   *
   * @return the endpoint
   */
  public URI endpoint() {
    return options.endpoint(child.port());
  }

  /**
   * Returns the port the server listens on.
   *
   * @return the TCP port
   */
  public int port() {
    return child.port();
  }

  /**
   * Returns the region of the server's queues, as given to the builder or the default.
   *
   * @return the region name
   */
  public String region() {
    return options.region == null ? DEFAULT_REGION : options.region;
  }

  /**
   * Returns the account id in the server's queue URLs and ARNs.
   *
   * @return the 12-digit account id
   */
  public String accountId() {
    return options.accountId == null ? DEFAULT_ACCOUNT_ID : options.accountId;
  }

  /**
   * Returns the URL of a queue of this server's account, whether or not it exists.
   *
   * @param queueName the queue's name
   * @return {@code <endpoint>/<account>/<queueName>}
   */
  public String queueUrl(String queueName) {
    return endpoint() + "/" + accountId() + "/" + queueName;
  }

  /**
   * Returns the executable this server runs.
   *
   * @return the binary's path
   */
  public Path binary() {
    return binary;
  }

  /**
   * Returns the admin token this launcher sends ({@code Authorization: Bearer <token>}) with every
   * admin call: the builder's {@link Builder#adminToken(String)}, else the {@code --admin-token} of
   * its extra arguments, else {@value #ADMIN_TOKEN_ENV} in the server's environment.
   *
   * @return the token, or empty if the server runs without one
   */
  public Optional<String> adminToken() {
    return Optional.ofNullable(child.adminToken());
  }

  // ------------------------------------------------------------------ admin endpoints

  /**
   * Returns the JSON text of {@code GET /health}, such as {@code
   * {"status":"ok","live":true,"ready":true,...}}.
   *
   * @return the health document
   */
  public String health() {
    return admin("GET", "/health", null);
  }

  /**
   * Returns the server to its starting state ({@code POST /_localsqs/reset}): every queue and
   * message is dropped, then the queues, fault rules and clock that its config file declares are
   * restored.
   */
  public void reset() {
    String answer = admin("POST", "/_localsqs/reset", "");
    if (!RESET_OK.matcher(answer).find()) {
      throw new LocalSqsException("reset failed: " + answer);
    }
  }

  /**
   * Moves the server's clock forward ({@code POST /_localsqs/clock}): visibility timeouts, delays,
   * retention and deduplication windows then behave as if that time had passed, and parked long
   * polls see the new time at once.
   *
   * @param by how far to move it (millisecond precision)
   * @return the server's answer, {@code {"now_ms":...,"offset_ms":...,"frozen":...}}
   */
  public String advanceClock(Duration by) {
    if (by.isNegative()) {
      throw new IllegalArgumentException("the clock never moves backwards: " + by);
    }
    String seconds = java.math.BigDecimal.valueOf(by.toMillis(), 3).toPlainString();
    return admin("POST", "/_localsqs/clock", "{\"advance_seconds\": " + seconds + "}");
  }

  /**
   * Sends a request to one of the server's admin endpoints (see the README's "Looking inside") and
   * returns the body of a 200 answer. When the server has an admin token ({@link #adminToken()}),
   * the request carries {@code Authorization: Bearer <token>}.
   *
   * @param method the HTTP method, such as {@code GET}, {@code POST} or {@code DELETE}
   * @param path the path, such as {@code /_localsqs/faults}
   * @param jsonBody the request body, or null for none
   * @return the answer's body
   * @throws LocalSqsException on any other status, or if the server is not running
   */
  public String admin(String method, String path, String jsonBody) {
    if (!isRunning()) {
      throw new LocalSqsException("the server is not running");
    }
    return http.call(endpoint(), child.adminToken(), method, path, jsonBody);
  }

  // ------------------------------------------------------------------ clients

  /**
   * Returns a synchronous SQS client for this server: its endpoint, its region and dummy
   * credentials, everything else (checksum validation included) at the SDK's defaults. The client
   * is made once, shared, and closed by {@link #stop()}; do not close it yourself. Needs the AWS
   * SDK for Java 2.x {@code sqs} module.
   *
   * @return the shared client
   */
  public software.amazon.awssdk.services.sqs.SqsClient client() {
    return sdkClients().sync();
  }

  /**
   * Returns an asynchronous SQS client for this server, configured as {@link #client()} is; shared
   * and closed by {@link #stop()}.
   *
   * @return the shared async client
   */
  public software.amazon.awssdk.services.sqs.SqsAsyncClient asyncClient() {
    return sdkClients().async();
  }

  /**
   * Returns a new builder of synchronous clients, preset with this server's endpoint, region and
   * dummy credentials, for clients with settings of your own (you close what you build).
   *
   * @return a preset builder
   */
  public software.amazon.awssdk.services.sqs.SqsClientBuilder clientBuilder() {
    return SdkClients.syncBuilder(this);
  }

  /**
   * Returns a new builder of asynchronous clients, preset as {@link #clientBuilder()} is.
   *
   * @return a preset builder
   */
  public software.amazon.awssdk.services.sqs.SqsAsyncClientBuilder asyncClientBuilder() {
    return SdkClients.asyncBuilder(this);
  }

  private SdkClients sdkClients() {
    synchronized (lock) {
      if (child.process() == null) {
        throw new LocalSqsException("the server is not running");
      }
      if (clients == null) {
        clients = new SdkClients(this);
      }
      return (SdkClients) clients;
    }
  }

  private void closeClients() {
    Object c = clients;
    clients = null;
    if (c != null) {
      ((SdkClients) c).close();
    }
  }

  // ------------------------------------------------------------------ helpers

  /**
   * Returns a TCP port that was free a moment ago on {@code host}.
   *
   * @param host the address to bind, such as {@code 127.0.0.1}
   * @return a port number
   */
  public static int freePort(String host) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(InetAddress.getByName(host), 0));
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot find a free port on " + host, e);
    }
  }

  /**
   * Finds the localsqs executable to run. The order: {@code explicit} if not null, then the system
   * property {@value #BINARY_PROPERTY}, then the environment variable {@value #BINARY_ENV} (or
   * {@code LOCALSQS_BINARY}, the Python helper's), then {@code localsqs} on the {@code PATH}, then
   * {@code target/release/localsqs} in the working directory or the nearest of its parents that has
   * one (a clone of the localsqs repository after {@code cargo build --release}).
   *
   * @param explicit the path given by the caller, or null
   * @return the executable's path
   * @throws LocalSqsException with what was tried, if none is found
   */
  public static Path findBinary(Path explicit) {
    return BinaryFinder.find(explicit);
  }

  @Override
  public String toString() {
    return "LocalSqsServer[" + (isRunning() ? "running at " + endpoint() : "stopped") + "]";
  }

  /**
   * Options of a {@link LocalSqsServer}; {@link #start()} launches it. Every option has a default:
   * in memory, {@code 127.0.0.1}, a free port, the binary from {@link
   * LocalSqsServer#findBinary(Path)}, the server's own region and account.
   */
  public static final class Builder {
    private final ServerOptions options = new ServerOptions();

    private Builder() {}

    /**
     * Sets the executable to run instead of looking for one.
     *
     * @param binary the localsqs executable
     * @return this builder
     */
    public Builder binary(Path binary) {
      options.binary = binary;
      return this;
    }

    /**
     * Sets the address to listen on ({@code --host}); default {@code 127.0.0.1}.
     *
     * @param host an address
     * @return this builder
     */
    public Builder host(String host) {
      options.host = Objects.requireNonNull(host);
      return this;
    }

    /**
     * Sets the port ({@code --port}); default 0, a free one.
     *
     * @param port a TCP port, or 0 for a free one
     * @return this builder
     */
    public Builder port(int port) {
      options.port = port;
      return this;
    }

    /**
     * Keeps state durably in this directory ({@code --data-dir}), created if missing; default: in
     * memory.
     *
     * @param dataDir the directory, or null for in memory
     * @return this builder
     */
    public Builder dataDir(Path dataDir) {
      options.dataDir = dataDir;
      return this;
    }

    /**
     * Declares queues, fault rules and a clock from this TOML file ({@code --config}); a reset
     * restores what it declares.
     *
     * @param config the file, or null for none
     * @return this builder
     */
    public Builder config(Path config) {
      options.config = config;
      return this;
    }

    /**
     * Sets the region of queue ARNs ({@code --region}) and of the clients this server makes;
     * default {@value LocalSqsServer#DEFAULT_REGION}.
     *
     * @param region a region name, or null for the default
     * @return this builder
     */
    public Builder region(String region) {
      options.region = region == null || region.isEmpty() ? null : region;
      return this;
    }

    /**
     * Sets the account in queue URLs and ARNs ({@code --account-id}); default {@value
     * LocalSqsServer#DEFAULT_ACCOUNT_ID}.
     *
     * @param accountId a 12-digit account id, or null for the default
     * @return this builder
     */
    public Builder accountId(String accountId) {
      options.accountId = accountId == null || accountId.isEmpty() ? null : accountId;
      return this;
    }

    /**
     * Guards the server's admin endpoints with this token ({@code --admin-token}) and sends it, as
     * {@code Authorization: Bearer <token>}, with every admin call ({@link LocalSqsServer#reset()},
     * {@link LocalSqsServer#advanceClock(Duration)}, {@link LocalSqsServer#admin(String, String,
     * String)}); {@code GET /health} stays open.
     *
     * <p>Without it, the launcher still sends the token the server will use: the value of {@code
     * --admin-token X} or {@code --admin-token=X} among {@link #args(String...)}, else {@value
     * LocalSqsServer#ADMIN_TOKEN_ENV} in the server's environment ({@link #env(String, String)},
     * else this JVM's). Giving it here and in the arguments as well is an error.
     *
     * @param adminToken the token, or null (or empty) for none of the builder's own
     * @return this builder
     */
    public Builder adminToken(String adminToken) {
      options.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
      return this;
    }

    /**
     * Appends arguments to the command line, such as {@code "--enforce-cooloffs"}.
     *
     * @param args more arguments
     * @return this builder
     */
    public Builder args(String... args) {
      Collections.addAll(options.extraArgs, args);
      return this;
    }

    /**
     * Sets an environment variable of the server process, such as {@code RUST_LOG=debug}.
     *
     * @param name the variable
     * @param value its value
     * @return this builder
     */
    public Builder env(String name, String value) {
      options.env.put(name, value);
      return this;
    }

    /**
     * Sets how long {@link #start()} waits for {@code /health}; default 30 s.
     *
     * @param timeout the start-up deadline
     * @return this builder
     */
    public Builder startupTimeout(Duration timeout) {
      options.startupTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * Sets how long {@link LocalSqsServer#stop()} waits after SIGTERM before killing; default 10 s.
     *
     * @param timeout the grace period
     * @return this builder
     */
    public Builder stopTimeout(Duration timeout) {
      options.stopTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /**
     * Finds the binary, starts the server and waits until it answers {@code GET /health}.
     *
     * @return the running server
     * @throws LocalSqsException if the binary is missing, exits or does not answer in time (the
     *     message carries its output), or if the admin token is given twice
     */
    public LocalSqsServer start() {
      if (options.adminToken != null && AdminTokens.inArgs(options.extraArgs) != null) {
        throw new LocalSqsException(
            "the admin token is given twice: by adminToken(...) and by "
                + AdminTokens.FLAG
                + " in the extra arguments; keep one");
      }
      ServerOptions copy = options.copy();
      LocalSqsServer server = new LocalSqsServer(copy, findBinary(copy.binary));
      synchronized (server.lock) {
        server.child.launch(copy.port);
      }
      return server;
    }

    /** A key naming these options, so that equal options can share one server. */
    String key() {
      return options.key();
    }
  }
}
