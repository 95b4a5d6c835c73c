#!/usr/bin/env python3
"""Tests of scripts/layering-check.py on small trees built in a temp dir.

Run: python3 -m unittest scripts/layering_check_test.py
  or python3 scripts/layering_check_test.py
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layering-check.py")

ARCHITECTURE = """\
# Architecture

| folder | owns |
|---|---|
| `src/common` | basics |
| `src/codec` | encodings |
| `src/testkit` | fakes for tests |
"""

# common <- codec; testkit is linked only by codec's test.
BASE_TREE = {
    "src/common/CMakeLists.txt": """
        sluice_library(sluice_common
          SRCS
            status.cc
          DEPS
            fmt::fmt)
    """,
    "src/common/status.h": "#pragma once\n#include <string>\n",
    "src/common/status.cc": '#include "common/status.h"\n',
    "src/codec/CMakeLists.txt": """
        # sluice_codec: encodings.
        sluice_library(sluice_codec
          SRCS
            codec.cc
          DEPS
            sluice_common nlohmann_json::nlohmann_json)

        sluice_test(codec_test
          SRCS codec_test.cc
          DEPS sluice_codec sluice_testkit GTest::gtest
          LABELS codec)
    """,
    "src/codec/codec.h": '#pragma once\n#include "common/status.h"\n',
    "src/codec/codec.cc": '#include "codec/codec.h"\n#include "local.h"\n',
    "src/codec/local.h": "#pragma once\n",
    "src/codec/codec_test.cc": '#include "codec/codec.h"\n#include "testkit/fake.h"\n',
    "src/testkit/CMakeLists.txt": """
        sluice_library(sluice_testkit SRCS fake.cc DEPS sluice_common)
    """,
    "src/testkit/fake.h": '#pragma once\n#include "common/status.h"\n',
    "src/testkit/fake.cc": '#include "testkit/fake.h"\n',
    "docs/architecture.md": ARCHITECTURE,
}


class LayeringCheckTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = self._tmp.name
        self.write(BASE_TREE)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, files):
        for path, text in files.items():
            full = os.path.join(self.root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text).lstrip("\n"))

    def run_check(self):
        result = subprocess.run([sys.executable, SCRIPT, "--root", self.root],
                                capture_output=True, text=True, check=False)
        return result.returncode, result.stdout.splitlines()

    def assert_fails_with(self, expected_line):
        code, lines = self.run_check()
        self.assertEqual(code, 1, lines)
        self.assertIn(expected_line, lines)
        return lines

    def test_clean_tree_passes(self):
        code, lines = self.run_check()
        self.assertEqual(code, 0, lines)
        self.assertEqual(lines, ["layering-check: 3 modules, 8 files, no violations"])

    def test_library_including_unlinked_module_fails(self):
        self.write({"src/common/status.cc": '#include "common/status.h"\n'
                                            '#include "codec/codec.h"\n'})
        lines = self.assert_fails_with(
            'layering: src/common/status.cc: includes "codec/codec.h" of src/codec which '
            "src/common does not link (declare it in DEPS or remove the include)")
        self.assertEqual(len([line for line in lines if line.startswith("layering:")]), 1)

    def test_header_is_held_to_its_library(self):
        self.write({"src/common/status.h": '#pragma once\n#include "codec/codec.h"\n'})
        self.assert_fails_with(
            'layering: src/common/status.h: includes "codec/codec.h" of src/codec which '
            "src/common does not link (declare it in DEPS or remove the include)")

    def test_test_file_may_include_test_only_dep(self):
        code, lines = self.run_check()
        self.assertEqual(code, 0, lines)  # codec_test.cc includes testkit/fake.h

    def test_library_code_may_not_include_test_only_dep(self):
        self.write({"src/codec/codec.cc": '#include "codec/codec.h"\n#include "testkit/fake.h"\n'})
        self.assert_fails_with(
            'layering: src/codec/codec.cc: includes "testkit/fake.h" of src/testkit which '
            "src/codec does not link (declare it in DEPS or remove the include)")

    def test_test_helpers_by_name_and_by_target(self):
        self.write({
            # Test-side by name, built by no target.
            "src/codec/codec_test_util.h": '#pragma once\n#include "testkit/fake.h"\n',
            # Test-side because only the test builds its twin.
            "src/codec/golden.h": '#pragma once\n#include "testkit/fake.h"\n',
            "src/codec/golden.cc": '#include "codec/golden.h"\n',
            # Test-side because only test code includes it.
            "src/codec/test_helpers.h": '#pragma once\n#include "testkit/fake.h"\n',
            "src/codec/codec_test.cc": '#include "codec/codec_test_util.h"\n'
                                       '#include "codec/golden.h"\n'
                                       '#include "codec/test_helpers.h"\n',
        })
        self.write({"src/codec/CMakeLists.txt": BASE_TREE["src/codec/CMakeLists.txt"].replace(
            "SRCS codec_test.cc", "SRCS codec_test.cc golden.cc")})
        code, lines = self.run_check()
        self.assertEqual(code, 0, lines)

    def test_target_link_libraries_adds_deps(self):
        self.write({"src/common/status.cc": '#include "testkit/fake.h"\n'})
        self.assertEqual(self.run_check()[0], 1)
        self.write({"src/common/CMakeLists.txt": BASE_TREE["src/common/CMakeLists.txt"]
                    + "target_link_libraries(sluice_common PUBLIC sluice_testkit)\n"})
        # testkit -> common and common -> testkit: now a cycle instead.
        self.assert_fails_with("layering: cycle: src/common -> src/testkit -> src/common")

    def test_generated_proto_headers_map_to_proto(self):
        self.write({
            "proto/CMakeLists.txt": """
                add_library(sluice_proto STATIC ${proto_srcs} ${proto_hdrs})
                target_link_libraries(sluice_proto PUBLIC protobuf::libprotobuf)
            """,
            "src/codec/codec.cc": '#include "codec/codec.h"\n#include "etcd/rpc.pb.h"\n',
        })
        self.assert_fails_with(
            'layering: src/codec/codec.cc: includes "etcd/rpc.pb.h" of proto which '
            "src/codec does not link (declare it in DEPS or remove the include)")
        self.write({"src/codec/CMakeLists.txt": BASE_TREE["src/codec/CMakeLists.txt"].replace(
            "sluice_common nlohmann", "sluice_common sluice_proto nlohmann")})
        code, lines = self.run_check()
        self.assertEqual(code, 0, lines)

    def test_cycle_between_library_modules_is_reported(self):
        self.write({"src/common/CMakeLists.txt": BASE_TREE["src/common/CMakeLists.txt"].replace(
            "fmt::fmt", "sluice_codec fmt::fmt")})
        self.assert_fails_with("layering: cycle: src/codec -> src/common -> src/codec")

    def test_test_targets_do_not_make_cycles(self):
        self.write({"src/common/CMakeLists.txt": BASE_TREE["src/common/CMakeLists.txt"] + """
            sluice_test(common_test SRCS status_test.cc DEPS sluice_codec LABELS common)
        """})
        self.write({"src/common/status_test.cc": '#include "codec/codec.h"\n'})
        code, lines = self.run_check()
        self.assertEqual(code, 0, lines)

    def test_folder_missing_from_architecture_doc_is_reported(self):
        self.write({"docs/architecture.md": ARCHITECTURE.replace("`src/codec`", "`codec`")})
        lines = self.assert_fails_with("layering: docs/architecture.md does not mention src/codec")
        self.assertEqual([line for line in lines if line.startswith("layering:")],
                         ["layering: docs/architecture.md does not mention src/codec"])

    def test_prefix_of_another_folder_does_not_count_as_mentioned(self):
        os.makedirs(os.path.join(self.root, "src/code"))
        self.assert_fails_with("layering: docs/architecture.md does not mention src/code")


if __name__ == "__main__":
    unittest.main()
