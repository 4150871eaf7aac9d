"""Project tools through a real MCP client session (and the REST door) on projects the tests write:
types from manifests, recommended extensions, monorepo modules, and dependencies with constraints."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from .support.results import call

pytestmark = pytest.mark.anyio


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


NODE_MONOREPO = {
    "package.json": json.dumps(
        {
            "name": "acme",
            "private": True,
            "workspaces": ["packages/*", "apps/web"],
            "dependencies": {"express": "^4.18.2", "lodash": "^4.17.21"},
            "devDependencies": {"typescript": "^5.0.0"},
            "peerDependencies": {"react": ">=18"},
            "engines": {"node": ">=20"},
        }
    ),
    "yarn.lock": "",
    "packages/core/package.json": json.dumps({"name": "@acme/core", "dependencies": {"zod": "^3.22.0"}}),
    "packages/ui/package.json": json.dumps({"name": "@acme/ui", "devDependencies": {"vitest": "^1.0.0"}}),
    "apps/web/package.json": json.dumps({"name": "web", "dependencies": {"@acme/ui": "workspace:*"}}),
    "node_modules/left-pad/package.json": json.dumps({"name": "left-pad"}),
    "dist/package.json": json.dumps({"name": "built"}),
    ".vscode/extensions.json": '{\n  // recommended for this repo\n  "recommendations": [\n    "esbenp.prettier-vscode",\n'
    '    "dbaeumer.vscode-eslint", /* lint */\n    "ms-python.python",\n  ],\n  "unwantedRecommendations": ["ms-python.python"]\n}\n',
}


async def test_seed_shape_types_and_extensions(mcp: Any, ws_path: Path) -> None:
    write(ws_path, NODE_MONOREPO)
    async with mcp(ws_path) as client:
        out = await call(client, "get_project_modules")
    assert out["types"] == ["node"]
    assert out["extensions"] == ["esbenp.prettier-vscode", "dbaeumer.vscode-eslint"]
    modules = {m["path"]: m for m in out["modules"]}
    assert set(modules) == {".", "packages/core", "packages/ui", "apps/web"}  # node_modules and dist skipped
    assert modules["packages/core"]["name"] == "@acme/core" and modules["packages/core"]["workspace"] == "."
    assert modules["."]["name"] == "acme" and "workspace" not in modules["."]
    assert out["workspaces"] == [
        {
            "path": ".",
            "kind": "yarn",
            "patterns": ["packages/*", "apps/web"],
            "members": ["packages/core", "packages/ui", "apps/web"],
        }
    ]


async def test_node_dependencies_seed_shape(mcp: Any, ws_path: Path) -> None:
    write(ws_path, NODE_MONOREPO)
    async with mcp(ws_path) as client:
        out = await call(client, "get_project_dependencies")
        member = await call(client, "get_project_dependencies", path="packages/core")
    assert out["type"] == "node"
    assert out["dependencies"] == {"express": "^4.18.2", "lodash": "^4.17.21"}
    assert out["devDependencies"] == {"typescript": "^5.0.0"}
    eco = out["ecosystems"][0]
    assert (
        eco["manifest"] == "package.json"
        and eco["peerDependencies"] == {"react": ">=18"}
        and eco["engines"] == {"node": ">=20"}
    )
    by_path = {m["path"]: m for m in out["modules"]}
    assert by_path[os.path.join("apps", "web")]["dependencies"] == {"@acme/ui": "workspace:*"}
    assert by_path[os.path.join("packages", "ui")]["devDependencies"] == {"vitest": "^1.0.0"}
    assert (
        member["type"] == "node"
        and member["dependencies"] == {"zod": "^3.22.0"}
        and member["path"] == os.path.join("packages", "core")
    )


async def test_python_pyproject_pep621_groups_uv_and_requirements(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "pyproject.toml": """
[build-system]
requires = ["hatchling>=1.20"]
build-backend = "hatchling.build"

[project]
name = "svc"
requires-python = ">=3.11"
dependencies = [
  "requests>=2.31,<3",
  "uvicorn[standard]>=0.30",
  "tomli; python_version < '3.11'",
  "mylib @ https://example.com/mylib-1.0.tar.gz",
]

[project.optional-dependencies]
test = ["pytest>=8", "pytest-cov"]
postgres = ["psycopg[binary]>=3.1"]

[dependency-groups]
lint = ["ruff>=0.6"]
dev = ["ipython", {include-group = "lint"}]

[tool.uv]
dev-dependencies = ["mypy==1.10.0"]
""",
            "requirements.txt": "# pinned\nflask==3.0.0  # web\n-r requirements-base.txt\n--index-url https://pypi.org/simple\nnumpy>=1.26 \\\n  --hash=sha256:abc\n",
            "requirements-base.txt": "click>=8\n",
            "requirements-dev.txt": "-e ./tools#egg=devtools\nblack==24.1.0\n",
        },
    )
    async with mcp(ws_path) as client:
        out = await call(client, "get_project_dependencies")
        modules = await call(client, "get_project_modules")
    assert out["type"] == "python" and modules["types"] == ["python"]
    py = out["ecosystems"][0]
    assert py["manifest"] == "pyproject.toml"
    assert py["dependencies"] == {
        "requests": "<3,>=2.31",
        "uvicorn": "[standard]>=0.30",
        "tomli": '*; python_version < "3.11"',
        "mylib": "@ https://example.com/mylib-1.0.tar.gz",
    }
    assert py["optionalDependencies"] == {
        "test": {"pytest": ">=8", "pytest-cov": "*"},
        "postgres": {"psycopg": "[binary]>=3.1"},
    }
    assert py["groups"] == {
        "lint": {"ruff": ">=0.6"},
        "dev": {"ipython": "*", "ruff": ">=0.6", "mypy": "==1.10.0"},
    }
    assert {"pytest", "pytest-cov", "ruff", "ipython", "mypy"} == set(py["devDependencies"])
    assert py["requiresPython"] == ">=3.11" and py["buildRequires"] == {"hatchling": ">=1.20"}
    reqs = out["ecosystems"][1]
    assert reqs["dependencies"] == {"flask": "==3.0.0", "click": ">=8", "numpy": ">=1.26"}
    assert reqs["devDependencies"] == {"devtools": "editable:./tools#egg=devtools", "black": "==24.1.0"}
    # the seed's top-level view merges both python manifests, pyproject first
    assert out["dependencies"]["requests"] == "<3,>=2.31" and out["dependencies"]["flask"] == "==3.0.0"
    assert out["devDependencies"]["black"] == "==24.1.0"


async def test_poetry_and_pipfile(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "poetry/pyproject.toml": """
[tool.poetry]
name = "legacy"
version = "0.1.0"

[tool.poetry.dependencies]
python = "^3.10"
django = "^4.2"
celery = {version = "^5.3", extras = ["redis"]}
local = {path = "../local", develop = true}

[tool.poetry.dev-dependencies]
pytest = "^7"

[tool.poetry.group.docs.dependencies]
mkdocs = "*"
""",
            "pipenv/Pipfile": '[packages]\nrequests = "*"\n\n[dev-packages]\npytest = ">=7"\n\n[requires]\npython_version = "3.11"\n',
        },
    )
    async with mcp(ws_path) as client:
        poetry = await call(client, "get_project_dependencies", path="poetry")
        pipenv = await call(client, "get_project_dependencies", path="pipenv")
        modules = await call(client, "get_project_modules")
    assert poetry["dependencies"] == {"django": "^4.2", "celery": "[redis]^5.3", "local": "path:../local"}
    assert poetry["devDependencies"] == {"pytest": "^7", "mkdocs": "*"}
    assert poetry["ecosystems"][0]["requiresPython"] == "^3.10" and poetry["ecosystems"][0]["groups"][
        "docs"
    ] == {"mkdocs": "*"}
    assert pipenv["dependencies"] == {"requests": "*"} and pipenv["devDependencies"] == {"pytest": ">=7"}
    names = {m["path"]: m["name"] for m in modules["modules"]}
    assert names["poetry"] == "legacy" and modules["types"] == ["python"]


async def test_go_mod_and_go_work(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "go.work": "go 1.22\n\nuse (\n\t./api\n\t./tools // comment\n)\nuse ./cli\n",
            "api/go.mod": """module example.com/api

go 1.22
toolchain go1.22.3

require (
\tgithub.com/gin-gonic/gin v1.9.1
\tgolang.org/x/text v0.14.0 // indirect
)

require github.com/stretchr/testify v1.8.4

replace example.com/shared => ../shared

tool golang.org/x/tools/cmd/stringer
require golang.org/x/tools v0.20.0
""",
            "tools/go.mod": "module example.com/tools\n\ngo 1.22\n",
            "cli/go.mod": "module example.com/cli\n",
        },
    )
    async with mcp(ws_path) as client:
        modules = await call(client, "get_project_modules")
        deps = await call(client, "get_project_dependencies", path="api")
    assert modules["types"] == ["go"]
    assert modules["workspaces"] == [
        {
            "path": ".",
            "kind": "go",
            "patterns": ["./api", "./tools", "./cli"],
            "members": ["api", "tools", "cli"],
        }
    ]
    names = {m["path"]: m["name"] for m in modules["modules"]}
    assert names["api"] == "example.com/api" and names["cli"] == "example.com/cli"
    assert deps["type"] == "go"
    assert deps["dependencies"] == {
        "github.com/gin-gonic/gin": "v1.9.1",
        "github.com/stretchr/testify": "v1.8.4",
        "golang.org/x/tools": "v0.20.0",
    }
    assert deps["devDependencies"] == {"golang.org/x/tools/cmd/stringer": "v0.20.0"}
    eco = deps["ecosystems"][0]
    assert eco["indirectDependencies"] == {"golang.org/x/text": "v0.14.0"} and eco["goVersion"] == "1.22"
    assert eco["replace"] == {"example.com/shared": "../shared"} and eco["toolchain"] == "go1.22.3"


async def test_cargo_workspace(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/old"]\n\n[workspace.dependencies]\nserde = "1.0"\n',
            "crates/core/Cargo.toml": """[package]
name = "core"
edition = "2021"

[dependencies]
serde = { workspace = true }
tokio = { version = "1.35", features = ["full"] }
util = { path = "../util" }
remote = { git = "https://example.com/r.git", tag = "v1" }

[dev-dependencies]
proptest = "1.4"

[build-dependencies]
cc = "1.0"

[target.'cfg(unix)'.dependencies]
libc = "0.2"
""",
            "crates/util/Cargo.toml": '[package]\nname = "util"\n',
            "crates/old/Cargo.toml": '[package]\nname = "old"\n',
            "target/debug/Cargo.toml": '[package]\nname = "build-output"\n',
        },
    )
    async with mcp(ws_path) as client:
        modules = await call(client, "get_project_modules")
        root = await call(client, "get_project_dependencies")
        core = await call(client, "get_project_dependencies", path="crates/core")
    assert modules["types"] == ["rust"]
    assert modules["workspaces"][0]["kind"] == "cargo" and modules["workspaces"][0]["members"] == [
        "crates/core",
        "crates/util",
    ]
    paths = {m["path"]: m for m in modules["modules"]}
    assert (
        "target/debug" not in paths
        and "workspace" not in paths["crates/old"]
        and paths["crates/core"]["workspace"] == "."
    )
    assert root["ecosystems"][0]["workspaceDependencies"] == {"serde": "1.0"}
    assert {m["path"] for m in root["modules"]} == {
        os.path.join("crates", "core"),
        os.path.join("crates", "util"),
    }
    assert core["dependencies"] == {
        "serde": "workspace",
        "tokio": "1.35",
        "util": "path:../util",
        "remote": "git:https://example.com/r.git#v1",
        "libc": "0.2",
    }
    assert core["devDependencies"] == {"proptest": "1.4"}
    assert (
        core["ecosystems"][0]["buildDependencies"] == {"cc": "1.0"}
        and core["ecosystems"][0]["edition"] == "2021"
    )


async def test_pnpm_uv_maven_gradle_workspaces(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "js/package.json": json.dumps({"name": "js-root"}),
            "js/pnpm-workspace.yaml": "# pnpm\npackages:\n  - 'pkgs/*'\n  - \"!pkgs/skip\"\n",
            "js/pkgs/a/package.json": json.dumps({"name": "a"}),
            "js/pkgs/skip/package.json": json.dumps({"name": "skip"}),
            "py/pyproject.toml": '[project]\nname = "root"\n[tool.uv.workspace]\nmembers = ["libs/*"]\n',
            "py/libs/one/pyproject.toml": '[project]\nname = "one"\ndependencies = ["attrs"]\n',
            "java/pom.xml": """<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <artifactId>parent</artifactId>
  <properties><junit.version>5.10.0</junit.version></properties>
  <modules><module>service</module></modules>
  <dependencies>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.9</version></dependency>
    <dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter</artifactId><version>${junit.version}</version><scope>test</scope></dependency>
  </dependencies>
</project>""",
            "java/service/pom.xml": '<project xmlns="http://maven.apache.org/POM/4.0.0"><artifactId>service</artifactId></project>',
            "kt/settings.gradle.kts": 'rootProject.name = "kt"\ninclude(":app", ":lib:core")\n',
            "kt/build.gradle.kts": "plugins { java }\n",
            "kt/app/build.gradle.kts": "",
            "kt/lib/core/build.gradle": "",
        },
    )
    async with mcp(ws_path) as client:
        modules = await call(client, "get_project_modules")
        maven = await call(client, "get_project_dependencies", path="java")
    kinds = {(w["path"], w["kind"]): w["members"] for w in modules["workspaces"]}
    assert kinds[("js", "pnpm")] == ["js/pkgs/a"]
    assert kinds[("py", "uv")] == ["py/libs/one"]
    assert kinds[("java", "maven")] == ["java/service"]
    assert kinds[("kt", "gradle")] == ["kt/app", "kt/lib/core"]
    assert {"node", "python", "java", "maven", "gradle"} <= set(modules["types"])
    names = {m["path"]: m for m in modules["modules"]}
    assert names["java"]["name"] == "parent" and names["java"]["buildTool"] == "maven"
    assert names["kt/app"]["buildTool"] == "gradle" and names["kt/app"]["workspace"] == "kt"
    assert maven["type"] == "java"
    assert maven["dependencies"] == {"org.slf4j:slf4j-api": "2.0.9"}
    assert maven["devDependencies"] == {"org.junit.jupiter:junit-jupiter": "5.10.0"}


async def test_many_ecosystems_detected(mcp: Any, ws_path: Path) -> None:
    write(
        ws_path,
        {
            "Gemfile": "source 'https://rubygems.org'\ngem 'rails'\n",
            "php/composer.json": json.dumps(
                {
                    "name": "acme/site",
                    "require": {"php": ">=8.1", "laravel/framework": "^10.0"},
                    "require-dev": {"phpunit/phpunit": "^10"},
                }
            ),
            "dotnet/App.csproj": '<Project Sdk="Microsoft.NET.Sdk"></Project>',
            "dotnet/App.sln": "",
            "native/CMakeLists.txt": "project(x)\n",
            "tsconfig.json": "{}",
            "Dockerfile": "FROM scratch\n",
        },
    )
    async with mcp(ws_path) as client:
        modules = await call(client, "get_project_modules")
        php = await call(client, "get_project_dependencies", path="php")
        root = await call(client, "get_project_dependencies")
    assert modules["types"][:3] == ["ruby", "typescript", "docker"]  # root first, by priority
    assert {"php", "dotnet", "cmake"} <= set(modules["types"])
    assert (
        php["type"] == "php"
        and php["dependencies"]["laravel/framework"] == "^10.0"
        and php["devDependencies"] == {"phpunit/phpunit": "^10"}
    )
    assert (
        "type" not in root and root["dependencies"] == {} and root["ecosystems"] == []
    )  # Gemfile: detected, not parsed


async def test_empty_and_broken_manifests(mcp: Any, ws_path: Path) -> None:
    async with mcp(ws_path) as client:
        empty = await call(client, "get_project_modules")
        deps = await call(client, "get_project_dependencies")
    assert empty == {"types": [], "extensions": [], "modules": []}
    assert deps == {"dependencies": {}, "devDependencies": {}, "ecosystems": []}  # no type: null, left out
    write(
        ws_path,
        {
            "package.json": "{not json",
            "pyproject.toml": "[project\nname=",
            ".vscode/extensions.json": "{oops",
        },
    )
    async with mcp(ws_path) as client:
        broken = await call(client, "get_project_modules")
        deps = await call(client, "get_project_dependencies")
    assert broken["types"] == ["node", "python"] and broken["extensions"] == []
    assert deps["ecosystems"] == []


async def test_manifests_of_the_wrong_shape_are_read_around_not_crashed_on(mcp: Any, ws_path: Path) -> None:
    # Valid TOML whose keys hold something else (a string, a list, a number): the tools answered
    # "Error executing tool" (AttributeError/TypeError) instead of reading what they could.
    write(
        ws_path,
        {
            "pyproject.toml": 'project = "x"\ntool = "y"\n',
            "poetry/pyproject.toml": (
                '[tool.poetry]\nname = "p"\ndependencies = ["a"]\ngroup = ["b"]\n'
                'dev-dependencies = {x = {version = "1", extras = 1}}\n'
                "[tool.uv.workspace]\nmembers = 1\nexclude = 1\n"
            ),
            "groups/pyproject.toml": (
                '[project]\nname = "g"\ndependencies = ["attrs"]\n[dependency-groups]\ndev = 1\ntest = ["pytest"]\n'
            ),
            "pipenv/Pipfile": 'packages = ["a"]\nrequires = "3.12"\n[dev-packages]\npytest = "*"\n',
            "crate/Cargo.toml": 'package = "x"\n[dependencies]\nserde = "1"\n[workspace]\nmembers = 1\nexclude = 1\n',
        },
    )
    async with mcp(ws_path) as client:
        modules = await call(client, "get_project_modules")
        root = await call(client, "get_project_dependencies")
        poetry = await call(client, "get_project_dependencies", path="poetry")
        groups = await call(client, "get_project_dependencies", path="groups")
        pipenv = await call(client, "get_project_dependencies", path="pipenv")
        crate = await call(client, "get_project_dependencies", path="crate")
    names = {m["path"]: m["name"] for m in modules["modules"]}
    assert names == {".": ws_path.name, "poetry": "p", "groups": "g", "crate": "crate"}
    assert {(w["path"], w["kind"], tuple(w["members"])) for w in modules["workspaces"]} == {
        ("poetry", "uv", ()),
        ("crate", "cargo", ()),
    }
    assert root["type"] == "python" and root["dependencies"] == {}
    assert poetry["dependencies"] == {} and poetry["devDependencies"] == {"x": "1"}
    assert groups["dependencies"] == {"attrs": "*"} and groups["devDependencies"] == {"pytest": "*"}
    assert pipenv["dependencies"] == {} and pipenv["devDependencies"] == {"pytest": "*"}
    assert crate["dependencies"] == {"serde": "1"}


async def test_walk_limits_links_and_refusals(mcp: Any, ws_path: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "package.json").write_text(json.dumps({"name": "secret", "dependencies": {"leak": "1"}}))
    (outside / "go.mod").write_text("module secret\n")
    write(
        ws_path,
        {
            "a/b/c/d/e/f/g/package.json": json.dumps({"name": "deep"}),
            "pyproject.toml": '[project]\nname="x"\n',
        },
    )
    (ws_path / "linked").symlink_to(outside)
    (ws_path / "requirements.txt").symlink_to(outside / "package.json")
    (ws_path / "loop").symlink_to(ws_path)
    async with mcp(ws_path) as client:
        shallow = await call(client, "get_project_modules")
        deep = await call(client, "get_project_modules", maxDepth=8)
        deps = await call(client, "get_project_dependencies")
        refused = await client.call_tool("get_project_dependencies", {"path": "linked"})
        refused2 = await client.call_tool("get_project_dependencies", {"path": "../outside"})
    assert shallow["types"] == ["python"] and shallow["truncated"] is True
    assert "node" in deep["types"] and "a/b/c/d/e/f/g" in {m["path"] for m in deep["modules"]}
    assert all("secret" not in json.dumps(m) for m in deep["modules"])
    assert "leak" not in json.dumps(deps)
    assert refused.is_error and "outside the workspace" in refused.content[0].text
    assert refused2.is_error and str(outside) not in refused2.content[0].text


def test_rest_door_project_tools(http_server: Any, ws_path: Path) -> None:
    write(ws_path, NODE_MONOREPO)
    server = http_server(ws_path)
    modules = httpx.post(f"{server.url}/mcp/get_project_modules", json={}, timeout=30).json()
    assert modules["error"] is None and modules["status"]["types"] == ["node"]
    assert modules["status"]["extensions"] == ["esbenp.prettier-vscode", "dbaeumer.vscode-eslint"]
    deps = httpx.post(f"{server.url}/mcp/get_project_dependencies", json={}, timeout=30).json()
    assert deps["error"] is None
    status = deps["status"]
    assert status["type"] == "node" and status["dependencies"] == {"express": "^4.18.2", "lodash": "^4.17.21"}
    assert status["devDependencies"] == {"typescript": "^5.0.0"}
    bad = httpx.post(f"{server.url}/mcp/get_project_dependencies", json={"path": "../.."}, timeout=30)
    assert bad.status_code == 403 and bad.json()["status"] is None
