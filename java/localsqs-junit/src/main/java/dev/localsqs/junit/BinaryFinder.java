package dev.localsqs.junit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the localsqs executable, in the order {@link LocalSqsServer#findBinary(Path)} documents:
 * the caller's path, {@value LocalSqsServer#BINARY_PROPERTY}, {@value LocalSqsServer#BINARY_ENV}
 * (or the Python helper's {@code LOCALSQS_BINARY}), {@code localsqs} on the {@code PATH}, then the
 * {@code target/release/localsqs} of a localsqs checkout in the working directory or a parent.
 */
final class BinaryFinder {

  /** The variable the Python helper reads; accepted as a fallback for {@code LOCALSQS_BIN}. */
  private static final String PYTHON_BINARY_ENV = "LOCALSQS_BINARY";

  private BinaryFinder() {}

  /** See {@link LocalSqsServer#findBinary(Path)}. */
  static Path find(Path explicit) {
    String source = null;
    String raw = null;
    if (explicit != null) {
      source = "the builder's binary(...)";
      raw = explicit.toString();
    } else if (nonEmpty(System.getProperty(LocalSqsServer.BINARY_PROPERTY))) {
      source = "-D" + LocalSqsServer.BINARY_PROPERTY;
      raw = System.getProperty(LocalSqsServer.BINARY_PROPERTY);
    } else if (nonEmpty(System.getenv(LocalSqsServer.BINARY_ENV))) {
      source = "$" + LocalSqsServer.BINARY_ENV;
      raw = System.getenv(LocalSqsServer.BINARY_ENV);
    } else if (nonEmpty(System.getenv(PYTHON_BINARY_ENV))) {
      source = "$" + PYTHON_BINARY_ENV;
      raw = System.getenv(PYTHON_BINARY_ENV);
    }
    if (raw != null) {
      Path p = Path.of(raw);
      if (!raw.contains("/")) {
        Path onPath = onPath(raw);
        if (onPath != null) {
          return onPath;
        }
      }
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return p.toAbsolutePath();
      }
      throw new LocalSqsException(
          "the localsqs binary given by " + source + " is not an executable file: " + raw);
    }
    List<String> tried = new ArrayList<>();
    Path onPath = onPath("localsqs");
    if (onPath != null) {
      return onPath;
    }
    tried.add("localsqs on PATH");
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path candidate = dir.resolve("target").resolve("release").resolve("localsqs");
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    tried.add("target/release/localsqs in " + Path.of("").toAbsolutePath() + " and its parents");
    throw new LocalSqsException(
        "cannot find the localsqs binary (tried: "
            + String.join(", ", tried)
            + "). Build it with `cargo build --release` in a clone of localsqs, put it on PATH,"
            + " or set $"
            + LocalSqsServer.BINARY_ENV
            + " (or -D"
            + LocalSqsServer.BINARY_PROPERTY
            + ") to its path.");
  }

  private static Path onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate.toAbsolutePath();
      }
    }
    return null;
  }

  private static boolean nonEmpty(String s) {
    return s != null && !s.isEmpty();
  }
}
