package dev.localsqs.compat;

import java.util.ArrayList;
import java.util.List;

/**
 * A compatibility scenario: named steps run in order. tests/compat/run.sh runs one through a {@code
 * main} method, which prints one {@code ok}/{@code FAIL} line per step as the other clients'
 * scenarios do; the JUnit tests in this module run the same steps as dynamic tests.
 */
public final class Scenario {

  /** A step's body. */
  @FunctionalInterface
  public interface Body {
    /** Runs the step; any exception fails it. */
    void run() throws Exception;
  }

  /** One named step. */
  public record Step(String title, Body body) {}

  private final List<Step> steps = new ArrayList<>();

  /** Adds a step. */
  public Scenario step(String title, Body body) {
    steps.add(new Step(title, body));
    return this;
  }

  /** The steps, in order. */
  public List<Step> steps() {
    return List.copyOf(steps);
  }

  /**
   * Runs every step, printing a line for each; after a failing first step (the queues) the rest is
   * skipped. Returns the titles of the steps that failed.
   */
  public List<String> runAndPrint() {
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < steps.size(); i++) {
      Step step = steps.get(i);
      if (i > 0 && failures.contains(steps.get(0).title())) {
        break;
      }
      long t0 = System.nanoTime();
      try {
        step.body().run();
        System.out.printf("  ok   %-28s (%.2fs)%n", step.title(), (System.nanoTime() - t0) / 1e9);
      } catch (Throwable e) {
        failures.add(step.title());
        System.out.printf(
            "  FAIL %-28s %s: %s%n", step.title(), e.getClass().getSimpleName(), e.getMessage());
        StackTraceElement[] trace = e.getStackTrace();
        for (int j = 0; j < Math.min(4, trace.length); j++) {
          System.out.println("       at " + trace[j]);
        }
        if (e.getCause() != null) {
          System.out.println("       caused by " + e.getCause());
        }
      }
    }
    return failures;
  }

  /** Runs {@link #runAndPrint()} and exits the JVM: 0 if every step passed, 1 otherwise. */
  public void runAndExit() {
    int code = runAndPrint().isEmpty() ? 0 : 1;
    System.out.flush();
    System.exit(code);
  }
}
