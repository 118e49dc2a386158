"""Packaging beyond ``pyproject.toml``: ship the top-level ``keywords/`` inside the package.

``scrapyd-deploy`` builds the egg with ``setup.py bdist_egg`` (it writes a generic
``setup.py`` when there is none, which would leave the topics out). The bundled topics
live in ``keywords/`` at the top of the checkout, where the README and the evaluation
point; every build copies them to ``topicspider/keywords/``, where
:func:`topicspider.keywords.bundled_keywords_dir` finds them in an egg or a wheel.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

KEYWORDS_DIR = "keywords"


class BuildWithKeywords(build_py):
    """``build_py`` that also copies ``keywords/*.txt`` into the built package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib, "topicspider", KEYWORDS_DIR)
        self.mkpath(str(target))
        for source in sorted(Path(KEYWORDS_DIR).glob("*.txt")):
            self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": BuildWithKeywords})
