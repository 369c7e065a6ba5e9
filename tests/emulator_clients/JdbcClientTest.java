// Talks to the emulator's MySQL-protocol query port through MySQL
// Connector/J (Maven Central), the driver Doris' own connectors use. Run by
// mysql_client_test.cpp as `java -cp <jars> JdbcClientTest.java <port> <db>`
// after it created and loaded table `t`. Prints what it checked; exits 1 on
// the first mismatch.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;

public class JdbcClientTest {
  static void expect(boolean ok, String what) {
    if (!ok) {
      System.out.println("FAIL: " + what);
      System.exit(1);
    }
    System.out.println("ok: " + what);
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:mysql://127.0.0.1:" + args[0] + "/" + args[1] + "?useSSL=false&allowPublicKeyRetrieval=true"
        + "&connectTimeout=10000&socketTimeout=30000";
    // Wrong password: the server's access-denied error, code 1045.
    try (Connection c = DriverManager.getConnection(url, "tester", "wrong")) {
      expect(false, "wrong password refused");
    } catch (SQLException e) {
      expect(e.getErrorCode() == 1045, "wrong password refused with 1045: " + e.getMessage());
    }
    try (Connection c = DriverManager.getConnection(url, "tester", "s3cret"); Statement s = c.createStatement()) {
      expect(c.getCatalog().equals(args[1]), "connected to " + c.getCatalog());
      try (ResultSet r = s.executeQuery("SELECT id, v, ts FROM t WHERE id IN (1, 2, 3) AND id != 4 ORDER BY id DESC")) {
        ResultSetMetaData m = r.getMetaData();
        expect(m.getColumnCount() == 3 && m.getColumnLabel(2).equals("v"), "column labels");
        expect(r.next() && r.getLong(1) == 3 && r.getString(2) == null, "row 3 with NULL v");
        expect(r.next() && r.getLong(1) == 2 && r.getString(2).equals("b"), "row 2");
        String ts = r.getObject(3, java.time.LocalDateTime.class).toString();
        expect(ts.equals("2023-11-15T06:13:54.026"), "zone-converted DATETIME(3): " + ts);
        expect(r.next() && r.getLong(1) == 1 && r.getString(2).equals("a"), "row 1");
        expect(!r.next(), "three rows");
      }
      try (ResultSet r = s.executeQuery("SELECT COUNT(*) FROM t WHERE id > 1")) {
        expect(r.next() && r.getLong(1) == 2, "COUNT(*) with WHERE");
      }
      try (ResultSet r = s.executeQuery("SELECT * FROM t ORDER BY id LIMIT 1, 1")) {
        expect(r.next() && r.getLong("id") == 2 && !r.next(), "LIMIT offset, count");
      }
      try (ResultSet r = s.executeQuery("SHOW TRANSACTION FROM " + args[1] + " WHERE LABEL LIKE 'load_%'")) {
        expect(r.next() && r.getString("Label").equals("load_1") && r.getString("TransactionStatus").equals("VISIBLE"),
               "SHOW TRANSACTION ... LABEL LIKE");
      }
      try (ResultSet r = s.executeQuery(
               "SELECT SCHEMA_NAME FROM information_schema.schemata WHERE SCHEMA_NAME = '" + args[1] + "'")) {
        expect(r.next() && r.getString(1).equals(args[1]), "information_schema.schemata");
      }
      try (ResultSet r = s.executeQuery("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.columns WHERE "
               + "TABLE_SCHEMA = '" + args[1] + "' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION")) {
        expect(r.next() && r.getString(1).equals("id") && r.getString(2).equals("bigint"), "information_schema.columns");
      }
      // doris-kafka-connector's DorisSystemService statements, verbatim, as prepared statements.
      try (ResultSet r = s.executeQuery("SELECT `SCHEMA_NAME` FROM `INFORMATION_SCHEMA`.`SCHEMATA`;")) {
        boolean seen = false;
        while (r.next()) seen = seen || r.getString(1).equals(args[1]);
        expect(seen, "kafka connector: listDatabases");
      }
      try (PreparedStatement p = c.prepareStatement("SELECT TABLE_NAME FROM information_schema.`TABLES` WHERE TABLE_SCHEMA = ?")) {
        p.setObject(1, args[1]);
        try (ResultSet r = p.executeQuery()) {
          expect(r.next() && r.getString(1).equals("t") && !r.next(), "kafka connector: listTables");
        }
      }
      try (PreparedStatement p = c.prepareStatement(
               "SELECT COLUMN_NAME FROM information_schema.`COLUMNS` WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?")) {
        p.setObject(1, args[1]);
        p.setObject(2, "t");
        p.setObject(3, "ts");
        try (ResultSet r = p.executeQuery()) {
          expect(r.next() && r.getString(1).equals("ts"), "kafka connector: isColumnExist");
        }
        p.setObject(3, "nope");
        try (ResultSet r = p.executeQuery()) {
          expect(!r.next(), "kafka connector: isColumnExist (absent)");
        }
      }
      try {
        s.executeQuery("SELECT id FROM t GROUP BY id");
        expect(false, "GROUP BY refused");
      } catch (SQLException e) {
        expect(e.getErrorCode() == 1105 && e.getMessage().contains("Unsupported"), "GROUP BY refused: " + e.getMessage());
      }
      s.execute("CREATE TABLE t2 (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1");
      try (ResultSet r = s.executeQuery("SHOW TABLES")) {
        int n = 0;
        while (r.next()) ++n;
        expect(n == 2, "DDL through JDBC, SHOW TABLES");
      }
    }
    System.out.println("JDBC OK");
  }
}
