package dev.localsqs.compat;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Checks shared by the scenarios: MD5s computed here, independently of the SDK (the same algorithm
 * as tests/compat/python/common.py and js/common.js, checked against the same reference vectors),
 * assertions, and the admin endpoints of the server under test.
 */
public final class Checks {
  private Checks() {}

  /** A value of a message attribute: its data type and either a string or bytes. */
  public record Attr(String dataType, String string, byte[] binary) {
    /** A String, Number or custom-typed attribute. */
    public static Attr string(String dataType, String value) {
      return new Attr(dataType, value, null);
    }

    /** A Binary attribute. */
    public static Attr binary(byte[] value) {
      return new Attr("Binary", null, value);
    }
  }

  /** The MD5 of some bytes, in lower-case hex. */
  public static String md5Hex(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The MD5 of a string's UTF-8 bytes. */
  public static String md5Hex(String data) {
    return md5Hex(data.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * MD5OfMessageAttributes: names sorted, each of name, data type and value written as a 4-byte
   * big-endian length and the bytes, with a transport byte (1 string, 2 binary) before the value.
   */
  public static String md5OfAttributes(Map<String, Attr> attrs) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Map.Entry<String, Attr> e : new TreeMap<>(attrs).entrySet()) {
      field(out, e.getKey().getBytes(StandardCharsets.UTF_8));
      Attr v = e.getValue();
      field(out, v.dataType().getBytes(StandardCharsets.UTF_8));
      if (v.binary() != null) {
        out.write(2);
        field(out, v.binary());
      } else {
        out.write(1);
        field(out, v.string().getBytes(StandardCharsets.UTF_8));
      }
    }
    return md5Hex(out.toByteArray());
  }

  private static void field(ByteArrayOutputStream out, byte[] bytes) {
    out.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
    out.writeBytes(bytes);
  }

  static {
    // Reference vectors (docs/protocol, section 6.4), as in the Python and JS helpers.
    check(
        md5OfAttributes(Map.of("Foo", Attr.string("String", "Bar"))),
        "ae7155c6026991b6d54b11589678bf9c");
    check(
        md5OfAttributes(Map.of("timestamp", Attr.string("Number.java.lang.Long", "1493147359900"))),
        "2e2e4876d8e0bd6b8c2c8f556831c349");
    check(
        md5OfAttributes(Map.of("b", Attr.binary(new byte[] {0, 1, 2}))),
        "0911ac989fa4a4b3440f074ba9941547");
  }

  private static void check(String got, String want) {
    if (!got.equals(want)) {
      throw new IllegalStateException("md5OfAttributes does not match the reference vectors");
    }
  }

  /** Fails unless {@code actual} equals {@code expected}. */
  public static void assertEq(Object actual, Object expected, String what) {
    if (!Objects.equals(actual, expected)) {
      throw new AssertionError(what + ": expected " + expected + ", got " + actual);
    }
  }

  /** Fails unless {@code condition} holds. */
  public static void check(boolean condition, String what) {
    if (!condition) {
      throw new AssertionError("assertion failed: " + what);
    }
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();

  /** Sends a request to an admin endpoint of the server and returns the body of a 200 answer. */
  public static String admin(URI endpoint, String method, String path, String jsonBody) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(endpoint.resolve(path)).timeout(Duration.ofSeconds(30));
    b.method(
        method,
        jsonBody == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(jsonBody));
    try {
      HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        throw new AssertionError(
            method + " " + path + " answered " + r.statusCode() + ": " + r.body());
      }
      return r.body();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Moves the server's clock forward ({@code POST /_localsqs/clock}). */
  public static void advanceClock(URI endpoint, int seconds) {
    admin(endpoint, "POST", "/_localsqs/clock", "{\"advance_seconds\": " + seconds + "}");
  }
}
