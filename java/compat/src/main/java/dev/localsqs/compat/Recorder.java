package dev.localsqs.compat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * Protocol evidence: an SDK execution interceptor that records every request the client sends, so
 * that a scenario can prove which wire protocol all of them used (a client upgrade that silently
 * switches protocol fails the scenario). JSON means an {@code X-Amz-Target: AmazonSQS.<Action>}
 * header; Query means an {@code Action=} form body.
 */
public final class Recorder implements ExecutionInterceptor {

  /** One recorded request. */
  public record Request(String method, String url, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.getOrDefault(name.toLowerCase(java.util.Locale.ROOT), "");
    }

    String protocol() {
      if (header("x-amz-target").startsWith("AmazonSQS.")) {
        return "json";
      }
      boolean form = header("content-type").startsWith("application/x-www-form-urlencoded");
      // The async clients' bodies are streams that are not read here: the content type tells.
      if (body.startsWith("Action=") || body.contains("&Action=") || (form && body.isEmpty())) {
        return "query";
      }
      return "unknown";
    }

    String operation() {
      String target = header("x-amz-target");
      if (target.startsWith("AmazonSQS.")) {
        return target.substring("AmazonSQS.".length());
      }
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile("(?:^|&)Action=([A-Za-z]+)").matcher(body);
      return m.find() ? m.group(1) : "?";
    }
  }

  private static final int BODY_PREFIX = 400;
  private final List<Request> requests = new ArrayList<>();

  @Override
  public void beforeTransmission(
      Context.BeforeTransmission context, ExecutionAttributes executionAttributes) {
    SdkHttpRequest http = context.httpRequest();
    Map<String, String> headers = new TreeMap<>();
    http.headers()
        .forEach((k, v) -> headers.put(k.toLowerCase(java.util.Locale.ROOT), String.join(",", v)));
    String body = "";
    Optional<ContentStreamProvider> content =
        context.requestBody().map(RequestBody::contentStreamProvider);
    if (content.isEmpty() && http instanceof SdkHttpFullRequest full) {
      content = full.contentStreamProvider(); // the Query protocol's form body
    }
    if (content.isPresent()) {
      try (InputStream in = content.get().newStream()) {
        body = new String(in.readNBytes(BODY_PREFIX), StandardCharsets.UTF_8);
      } catch (IOException e) {
        body = "<unreadable>";
      }
    }
    synchronized (requests) {
      requests.add(new Request(http.method().name(), http.getUri().toString(), headers, body));
    }
  }

  /** Returns a copy of the requests recorded so far. */
  public List<Request> requests() {
    synchronized (requests) {
      return List.copyOf(requests);
    }
  }

  /**
   * Fails unless every recorded request used {@code protocol} ({@code json} or {@code query});
   * prints the {@code EVIDENCE} line tests/compat/run.sh collects, then the operations used.
   */
  public void check(String name, String protocol) {
    List<Request> all = requests();
    Checks.check(!all.isEmpty(), "no request was captured");
    Request first = all.get(0);
    String kind = first.protocol();
    String detail =
        kind.equals("json") ? "X-Amz-Target: " + first.header("x-amz-target") + "; " : "";
    String body = first.body().length() > 80 ? first.body().substring(0, 80) : first.body();
    System.out.println(
        "EVIDENCE "
            + name
            + ": "
            + first.method()
            + " "
            + first.url()
            + " -> "
            + kind.toUpperCase(java.util.Locale.ROOT)
            + " ("
            + detail
            + "Content-Type: "
            + first.header("content-type")
            + "; body="
            + (body.isEmpty() ? "<stream>" : body)
            + ")");
    Map<String, Integer> kinds = new TreeMap<>();
    TreeSet<String> ops = new TreeSet<>();
    for (Request r : all) {
      kinds.merge(r.protocol(), 1, Integer::sum);
      ops.add(r.operation());
    }
    Checks.assertEq(
        kinds,
        Map.of(protocol, all.size()),
        "protocol of every request (expected " + protocol + ")");
    System.out.println(
        "       "
            + all.size()
            + " requests, all "
            + protocol.toUpperCase(java.util.Locale.ROOT)
            + "; operations: "
            + String.join(" ", ops));
  }
}
