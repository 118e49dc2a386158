"""demo.mariadb (`make mysql-up` / `make mysql-down`): a throwaway MariaDB of its own."""

from __future__ import annotations

import re
import socket
from contextlib import closing

import pymysql

from demo.mariadb import MariaDB, main
from topicspider.mysql.url import MySQLUrl


def test_up_prints_a_url_that_works_and_down_stops_it(tmp_path, capsys):
    folder = tmp_path / "mysql"
    try:
        assert main(["up", "--dir", str(folder)]) == 0
        [url] = re.findall(r"TOPICSPIDER_MYSQL_URL='(.+)'", capsys.readouterr().out)
        assert main(["up", "--dir", str(folder)]) == 0  # already up: the same URL
        assert f"'{url}'" in capsys.readouterr().out

        parsed = MySQLUrl.parse(url)
        assert parsed.host == "127.0.0.1"
        assert parsed.port not in (0, 3306)
        connection = pymysql.connect(**parsed.connect_kwargs(), connect_timeout=5)
        with closing(connection), connection.cursor() as cursor:
            cursor.execute("SELECT DATABASE(), @@character_set_server, @@bind_address")
            assert cursor.fetchone() == ("crawl", "utf8mb4", "127.0.0.1")
        assert (folder / "mysql.sock").exists()
        assert (folder / "server.json").stat().st_mode & 0o077 == 0
    finally:
        assert main(["down", "--dir", str(folder)]) == 0
    assert not MariaDB(folder).running()
    assert not (folder / "mysql.sock").exists()


def test_a_port_taken_before_the_server_binds_it_is_picked_again(tmp_path):
    """Tests run side by side each pick a free port for their MariaDB: another process may
    take it first. Before, the server then failed to start ("Address already in use")."""
    server = MariaDB(tmp_path / "mysql")
    taken = server.port
    with closing(socket.socket()) as squatter:
        squatter.bind(("127.0.0.1", taken))
        squatter.listen()
        try:
            server.start()
            assert server.port != taken
            url = MySQLUrl.parse(server.create_database("crawl"))
            connection = pymysql.connect(**url.connect_kwargs(), connect_timeout=5)
            with closing(connection), connection.cursor() as cursor:
                cursor.execute("SELECT @@port")
                assert cursor.fetchone() == (server.port,)
        finally:
            server.stop()
    assert MariaDB(tmp_path / "mysql").port == server.port, "kept for the next start"
