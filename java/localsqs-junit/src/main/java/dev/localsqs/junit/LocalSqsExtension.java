package dev.localsqs.junit;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;
import org.junit.platform.commons.support.ReflectionSupport;

/**
 * A JUnit 5 extension that runs tests against a localsqs server. Register it with
 * {@code @ExtendWith(LocalSqsExtension.class)} or with {@link LocalSqs @LocalSqs} (which also takes
 * options).
 *
 * <p>It injects, as test, lifecycle-method or constructor parameters, and into non-final fields of
 * the test class that are {@code null} or hold what it injected before (static fields before
 * {@code @BeforeAll}, instance fields when the instance is made):
 *
 * <ul>
 *   <li>{@link LocalSqsServer}: the server (endpoint, reset, clock, admin endpoints);
 *   <li>{@link URI}: its endpoint;
 *   <li>{@code SqsClient} and {@code SqsAsyncClient} (AWS SDK for Java 2.x): shared clients for it,
 *       closed with the server.
 * </ul>
 *
 * <p>By default each test class gets its own server and state is reset before each test; see {@link
 * LocalSqs#perClass()} and {@link LocalSqs#reset()}. Servers are kept in JUnit's extension store
 * (the class's, or the root context's for shared ones), which stops them when that context closes.
 * Needs JUnit 5.13 or newer.
 */
public class LocalSqsExtension
    implements BeforeAllCallback, BeforeEachCallback, TestInstancePostProcessor, ParameterResolver {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(LocalSqsExtension.class);
  private static final String SQS_CLIENT = "software.amazon.awssdk.services.sqs.SqsClient";
  private static final String SQS_ASYNC_CLIENT =
      "software.amazon.awssdk.services.sqs.SqsAsyncClient";

  /** Creates the extension; JUnit does this for {@code @ExtendWith} and {@code @LocalSqs}. */
  public LocalSqsExtension() {}

  /**
   * Returns the server of a test, starting it if needed: for use by other extensions.
   *
   * @param context a test's or a class's extension context
   * @return the running server
   */
  public static LocalSqsServer server(ExtensionContext context) {
    Options options = Options.of(context);
    ExtensionContext owner = options.perClass ? classContext(context) : context.getRoot();
    // Equal options share a server; a @Nested class with options of its own gets another one.
    String key = "server:" + options.builder().key();
    return owner
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(key, k -> options.builder().start(), LocalSqsServer.class);
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    LocalSqsServer server = server(context);
    injectFields(context.getRequiredTestClass(), null, server, true);
  }

  @Override
  public void postProcessTestInstance(Object testInstance, ExtensionContext context) {
    injectFields(testInstance.getClass(), testInstance, server(context), false);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (Options.of(context).reset) {
      server(context).reset();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext context) {
    return injectable(parameterContext.getParameter().getType());
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext context) {
    Class<?> type = parameterContext.getParameter().getType();
    Object value = valueFor(type, server(context));
    if (value == null) {
      throw new ParameterResolutionException("cannot inject " + type.getName());
    }
    return value;
  }

  // ------------------------------------------------------------------ injection

  private static boolean injectable(Class<?> type) {
    return type == LocalSqsServer.class
        || type == URI.class
        || type.getName().equals(SQS_CLIENT)
        || type.getName().equals(SQS_ASYNC_CLIENT);
  }

  private static Object valueFor(Class<?> type, LocalSqsServer server) {
    if (type == LocalSqsServer.class) {
      return server;
    }
    if (type == URI.class) {
      return server.endpoint();
    }
    // Compared by name so that this class loads without the SDK on the class path.
    if (type.getName().equals(SQS_CLIENT)) {
      return server.client();
    }
    if (type.getName().equals(SQS_ASYNC_CLIENT)) {
      return server.asyncClient();
    }
    return null;
  }

  private static void injectFields(
      Class<?> testClass, Object instance, LocalSqsServer server, boolean statics) {
    List<Field> fields =
        ReflectionSupport.findFields(
            testClass,
            f ->
                injectable(f.getType())
                    && Modifier.isStatic(f.getModifiers()) == statics
                    && !Modifier.isFinal(f.getModifiers()),
            HierarchyTraversalMode.TOP_DOWN);
    for (Field field : fields) {
      try {
        field.setAccessible(true);
        Object current = field.get(instance);
        // Fields the test filled itself are left alone; ours are refreshed (a static field keeps
        // the previous class's server otherwise).
        if (current == null || issued(current)) {
          Object value = valueFor(field.getType(), server);
          remember(value);
          field.set(instance, value);
        }
      } catch (IllegalAccessException | RuntimeException e) {
        throw new IllegalStateException("cannot inject the localsqs field " + field, e);
      }
    }
  }

  private static final Set<Object> ISSUED = Collections.newSetFromMap(new WeakHashMap<>());

  private static synchronized boolean issued(Object value) {
    return ISSUED.contains(value);
  }

  private static synchronized void remember(Object value) {
    ISSUED.add(value);
  }

  // ------------------------------------------------------------------ options

  /** The outermost class context: @Nested classes share their outer class's server. */
  private static ExtensionContext classContext(ExtensionContext context) {
    ExtensionContext owner = context;
    while (owner.getTestMethod().isPresent()
        || owner.getParent().flatMap(ExtensionContext::getTestClass).isPresent()) {
      owner = owner.getParent().orElseThrow();
    }
    return owner;
  }

  private static final class Options {
    final boolean perClass;
    final boolean reset;
    private final LocalSqs annotation;

    private Options(LocalSqs annotation) {
      this.annotation = annotation;
      this.perClass = annotation == null || annotation.perClass();
      this.reset = annotation == null || annotation.reset();
    }

    static Options of(ExtensionContext context) {
      Optional<Class<?>> cls = context.getTestClass();
      LocalSqs found = null;
      // The innermost annotation wins; @Nested classes see their outer classes' annotation.
      for (Class<?> c = cls.orElse(null); c != null && found == null; c = c.getEnclosingClass()) {
        found = AnnotationSupport.findAnnotation(c, LocalSqs.class).orElse(null);
      }
      return new Options(found);
    }

    LocalSqsServer.Builder builder() {
      LocalSqsServer.Builder b = LocalSqsServer.builder();
      if (annotation == null) {
        return b;
      }
      b.region(annotation.region())
          .accountId(annotation.accountId())
          .adminToken(annotation.adminToken())
          .args(annotation.args());
      if (!annotation.dataDir().isEmpty()) {
        b.dataDir(Path.of(annotation.dataDir()));
      }
      if (!annotation.config().isEmpty()) {
        b.config(Path.of(annotation.config()));
      }
      if (!annotation.binary().isEmpty()) {
        b.binary(Path.of(annotation.binary()));
      }
      return b;
    }
  }
}
