package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/** The example programs and the benchmark (run as single-file sources) compile against the client. */
class ExamplesCompileTest {
  @Test
  void examplesAndBenchCompile() throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "a JDK, not a JRE");
    Path out = Files.createTempDirectory("relgraph-java-examples");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc = javac.run(null, null, err, "-d", out.toString(), "-cp",
        System.getProperty("java.class.path"), "examples/Basic.java", "examples/Cluster.java", "bench/RelgraphJavaBench.java");
    assertEquals(0, rc, err.toString());
  }
}
