package dev.localsqs.junit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The HTTP side of one server: the admin calls, with the admin token and the errors their answers
 * mean, and the wait for {@code GET /health} at start-up. Each server has its own, whose client
 * never goes through a proxy.
 */
final class AdminHttp {

  private static final Pattern NOT_READY = Pattern.compile("\"ready\"\\s*:\\s*false");

  private final HttpClient http =
      HttpClient.newBuilder()
          .proxy(HttpClient.Builder.NO_PROXY) // a proxy must never sit before a local server
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  /**
   * Sends an admin request and returns the body of a 200 answer; see {@link
   * LocalSqsServer#admin(String, String, String)}.
   *
   * @param token the admin token to send as {@code Authorization: Bearer <token>}, or null
   * @throws LocalSqsException on any other status, or if the request fails
   */
  String call(URI endpoint, String token, String method, String path, String jsonBody) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(endpoint.resolve(path)).timeout(Duration.ofSeconds(30));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (jsonBody == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("Content-Type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(jsonBody));
    }
    HttpResponse<String> r;
    try {
      r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new LocalSqsException(method + " " + path + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LocalSqsException(method + " " + path + " interrupted", e);
    }
    if (r.statusCode() == 404) {
      throw new LocalSqsException(
          method
              + " "
              + path
              + " is not supported by this localsqs binary (404); it may be older than this"
              + " helper");
    }
    if (r.statusCode() == 401) {
      throw new LocalSqsException(
          method
              + " "
              + path
              + " answered 401: the server guards its admin endpoints"
              + (token == null
                  ? " and no admin token is known; give it with adminToken(...)"
                  : " and refused the admin token sent")
              + ": "
              + r.body());
    }
    if (r.statusCode() != 200) {
      throw new LocalSqsException(
          method + " " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }

  /**
   * Waits until the server at {@code endpoint} answers {@code GET /health} with 200 and is not
   * {@code "ready": false}.
   *
   * @param process the server's process, watched for an early exit
   * @param shownCommand its command line for the error message, admin tokens masked
   * @param output its output so far, for the error message
   * @throws LocalSqsException if the process exits, the timeout passes or the wait is interrupted
   */
  void awaitHealthy(
      Process process,
      URI endpoint,
      Duration timeout,
      Supplier<String> shownCommand,
      Supplier<String> output) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String lastError = "no answer yet";
    while (true) {
      if (!process.isAlive()) {
        int code = process.exitValue();
        throw new LocalSqsException(
            "localsqs exited with code "
                + code
                + " during start-up (command: "
                + shownCommand.get()
                + "). Its output:\n"
                + orNothing(output.get()));
      }
      try {
        HttpResponse<String> r = get(endpoint, "/health", Duration.ofSeconds(1));
        if (r.statusCode() == 200 && !NOT_READY.matcher(r.body()).find()) {
          return;
        }
        lastError = "HTTP " + r.statusCode() + ": " + r.body();
      } catch (IOException e) {
        lastError = e.toString(); // refused, reset, timed out: not listening yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LocalSqsException("interrupted while waiting for localsqs to start", e);
      }
      if (System.nanoTime() >= deadline) {
        throw new LocalSqsException(
            "localsqs did not answer GET /health within "
                + timeout.toMillis()
                + " ms on "
                + endpoint
                + " (last error: "
                + lastError
                + "). Its output:\n"
                + orNothing(output.get()));
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LocalSqsException("interrupted while waiting for localsqs to start", e);
      }
    }
  }

  private HttpResponse<String> get(URI endpoint, String path, Duration timeout)
      throws IOException, InterruptedException {
    HttpRequest req = HttpRequest.newBuilder(endpoint.resolve(path)).timeout(timeout).GET().build();
    return http.send(req, HttpResponse.BodyHandlers.ofString());
  }

  private static String orNothing(String s) {
    String t = s.strip();
    return t.isEmpty() ? "(nothing)" : t;
  }
}
