package dev.localsqs.junit;

import java.util.List;
import java.util.Map;

/**
 * The admin token of a server: which one it will require, decided as the server decides ({@code
 * --admin-token} on its command line, else {@value LocalSqsServer#ADMIN_TOKEN_ENV} in its
 * environment), and command lines with the token masked for error messages.
 */
final class AdminTokens {

  /**
   * The server's flag for its admin token, as {@code --admin-token X} or {@code --admin-token=X}.
   */
  static final String FLAG = "--admin-token";

  private AdminTokens() {}

  /**
   * The token the server will require, as it decides: {@code --admin-token} on the command line
   * (the builder's, else the extra arguments'), else {@value LocalSqsServer#ADMIN_TOKEN_ENV} in its
   * environment; empty means none (null).
   */
  static String resolve(String explicit, List<String> args, Map<String, String> env) {
    if (explicit != null) {
      return explicit;
    }
    String fromArgs = inArgs(args);
    if (fromArgs != null) {
      return fromArgs.isEmpty() ? null : fromArgs;
    }
    String fromEnv = env.get(LocalSqsServer.ADMIN_TOKEN_ENV);
    return fromEnv != null && !fromEnv.isEmpty() ? fromEnv : null;
  }

  /** The value of {@code --admin-token X} or {@code --admin-token=X} in {@code args}, or null. */
  static String inArgs(List<String> args) {
    String found = null;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--")) {
        break; // what follows is not an option
      }
      if (a.equals(FLAG) && i + 1 < args.size()) {
        found = args.get(++i);
      } else if (a.startsWith(FLAG + "=")) {
        found = a.substring(FLAG.length() + 1);
      }
    }
    return found;
  }

  /**
   * A command line for error messages: admin tokens are replaced by {@code ***}. Changes {@code
   * cmd}, which must be modifiable.
   */
  static String masked(List<String> cmd) {
    for (int i = 0; i < cmd.size(); i++) {
      String a = cmd.get(i);
      if (a.equals("--")) {
        break;
      }
      if (a.equals(FLAG) && i + 1 < cmd.size()) {
        cmd.set(++i, "***");
      } else if (a.startsWith(FLAG + "=")) {
        cmd.set(i, FLAG + "=***");
      }
    }
    return String.join(" ", cmd);
  }
}
