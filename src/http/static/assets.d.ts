// The approval page's files are imported as text (`with { type: "text" }`) so that they are
// embedded in the compiled binary; these declarations give those imports their real type.
declare module "*/static/approve.html" {
  const text: string;
  export default text;
}
declare module "*/static/approve.js" {
  const text: string;
  export default text;
}
declare module "*/static/approve.css" {
  const text: string;
  export default text;
}
declare module "*/static/approve-icon.svg" {
  const text: string;
  export default text;
}
declare module "*/static/docs.html" {
  const text: string;
  export default text;
}
declare module "*/static/dom.js" {
  const text: string;
  export default text;
}
declare module "*/static/docs.js" {
  const text: string;
  export default text;
}
declare module "*/static/base.css" {
  const text: string;
  export default text;
}
declare module "*/static/ops.css" {
  const text: string;
  export default text;
}
declare module "*/static/console.html" {
  const text: string;
  export default text;
}
declare module "*/static/console.js" {
  const text: string;
  export default text;
}
