package dev.localsqs.junit;

/** The localsqs binary could not be found or started, or an admin request failed. */
public class LocalSqsException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception with a message.
   *
   * @param message what went wrong
   */
  public LocalSqsException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a message and a cause.
   *
   * @param message what went wrong
   * @param cause the underlying error
   */
  public LocalSqsException(String message, Throwable cause) {
    super(message, cause);
  }
}
