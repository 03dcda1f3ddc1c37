// What an outcome report's notes go through (screenNotes): redaction, the cut of key material
// redaction cannot make safe, prompt-injection screening.
import { describe, expect, test } from "bun:test";
import { screenNotes } from "./outcome-notes.ts";
import { CUT_PLACEHOLDER } from "./rejection.ts";

const j = (...parts: string[]) => parts.join("");
// Real shapes: an OpenSSH key body ("openssh-key-v1" in base64), a PuTTY v3 key file, a base64 PEM key.
const OPENSSH_BODY = j(
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACBxY3VzdG9tIGtleSBmb3IgdGVzdGluZyBvbmx5IG5vdCByZWFs",
);
const PUTTY = [
  "PuTTY-User-Key-File-3: ssh-ed25519",
  "Encryption: none",
  "Comment: eddsa-key-20261127",
  "Public-Lines: 2",
  "AAAAC3NzaC1lZDI1NTE5AAAAIHdNu9x9dW0x8gQ0bq6Fh2uKz4c7KcQfX3vQ0Jv1",
  "yKtn",
  "Private-Lines: 1",
  j("AAAAIGd2Z3Vz9k3mQ8bL0cX7rP1tY4w", "N6hS2jF5vE8uA3oK9"),
  "Private-MAC: 7a1c5e9d3b8f2a6c4e0d9b7f5a3c1e8d6b4f2a0c9e7d5b3a1f8c6e4d2b0a9f7e",
].join("\n");
const PEM_IN_BASE64 = btoa(j("-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"));

describe("notes holding key material redaction cannot make safe are cut whole (session 13 audit)", () => {
  for (const [name, notes] of [
    ["a bare OpenSSH key body", `Worked once I put this in ~/.ssh/id_ed25519:\n${OPENSSH_BODY}\nthen ssh-add`],
    ["a PuTTY key file", `Converted with puttygen, this one works:\n${PUTTY}`],
    ["a key body with a zero-width space inside", `id_ed25519 now holds ${OPENSSH_BODY.slice(0, 20)}\u200b${OPENSSH_BODY.slice(20)}`],
  ] as const) {
    test(name, () => {
      const screened = screenNotes(notes);
      expect(screened.text).toBe(CUT_PLACEHOLDER);
      expect(screened.injection).toBeUndefined();
      expect(screenNotes(screened.text).text).toBe(CUT_PLACEHOLDER);
    });
  }
  test("ordinary notes and notes with redactable secrets (a base64 PEM key among them) are kept, redacted", () => {
    expect(screenNotes(`client-key-data is ${PEM_IN_BASE64}`).text).toBe("client-key-data is <redacted:private_key>");
    expect(screenNotes("Worked on Ubuntu 24.04 with Node 22; ssh-keygen -t ed25519 made a new key.").text).toBe(
      "Worked on Ubuntu 24.04 with Node 22; ssh-keygen -t ed25519 made a new key.",
    );
    expect(screenNotes("Worked after export DB_PASSWORD=S3cretPw9 in the shell").text).toBe(
      "Worked after export DB_PASSWORD=<redacted:password> in the shell",
    );
  });
});
