package dev.localsqs.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the annotated test class against a localsqs server: registers {@link LocalSqsExtension} with
 * these options. {@code @ExtendWith(LocalSqsExtension.class)} alone is the same as
 * {@code @LocalSqs} with every default.
 *
 * <pre>{@code
 * @LocalSqs(region = "eu-west-1")
 * class OrdersTest {
 *   @Test
 *   void sends(SqsClient sqs, LocalSqsServer server) { ... }
 * }
 * }</pre>
 *
 * <p>Paths ({@link #dataDir()}, {@link #config()}) are relative to the working directory, which
 * under Maven is the module's directory.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(LocalSqsExtension.class)
public @interface LocalSqs {

  /**
   * Whether the test class gets a server of its own, started before its first test and stopped
   * after its last ({@code true}, the default), or shares one with every other class of the run
   * that asks for the same options ({@code false}: started when first needed, stopped when the run
   * ends, in JUnit's root context). Use {@code false} with Spring's cached contexts.
   *
   * @return true for one server per class
   */
  boolean perClass() default true;

  /**
   * Whether state is reset ({@code POST /_localsqs/reset}) before each test, before the test's
   * {@code @BeforeEach} methods run: every queue and message is dropped and the {@link #config()}
   * file's queues come back. Queues made in {@code @BeforeAll} are therefore gone by the first test
   * unless this is {@code false}.
   *
   * @return true to reset before each test (the default)
   */
  boolean reset() default true;

  /**
   * The region of queue ARNs and of the injected clients ({@code --region}); empty for the server's
   * default, {@code us-east-1}.
   *
   * @return a region name or ""
   */
  String region() default "";

  /**
   * The account in queue URLs and ARNs ({@code --account-id}); empty for {@code 000000000000}.
   *
   * @return a 12-digit account id or ""
   */
  String accountId() default "";

  /**
   * A directory to keep state in durably ({@code --data-dir}); empty for in memory.
   *
   * @return a path or ""
   */
  String dataDir() default "";

  /**
   * A TOML file of queues, fault rules and clock settings to start with ({@code --config}); empty
   * for none.
   *
   * @return a path or ""
   */
  String config() default "";

  /**
   * A token guarding the server's admin endpoints ({@code --admin-token}); empty for none. The
   * extension's resets and the injected {@link LocalSqsServer}'s admin calls send it as {@code
   * Authorization: Bearer <token>}. Without it, a token given in {@link #args()} ({@code
   * "--admin-token=..."}) or by {@code LOCALSQS_ADMIN_TOKEN} in the environment is sent instead;
   * see {@link LocalSqsServer.Builder#adminToken(String)}.
   *
   * @return a token or ""
   */
  String adminToken() default "";

  /**
   * More command-line arguments, such as {@code "--enforce-cooloffs"}.
   *
   * @return extra arguments
   */
  String[] args() default {};

  /**
   * The executable to run; empty to look for it ({@link LocalSqsServer#findBinary}).
   *
   * @return a path or ""
   */
  String binary() default "";
}
