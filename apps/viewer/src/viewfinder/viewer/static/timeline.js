// The timeline of an artifact's steps, virtualised: a long artifact (10,000 steps) is
// fetched a page of steps at a time, and only the rows near the view are in the page.
// Every row has the same height, so a step's place is its index times that height.

//: A row's height in CSS pixels: the 60 px thumbnail, the padding and the border.
export const ROW_HEIGHT = 73;
//: Steps fetched at a time.
export const PAGE_SIZE = 200;
const OVERSCAN = 8;

export class Steps {
  // The steps of artifact `id` (`count` of them): fetched by pages, kept once fetched.
  constructor(id, count, getJSON) {
    this.id = id;
    this.count = count;
    this.getJSON = getJSON;
    this.known = new Array(count);
    this.pages = new Map();
  }

  add(offset, steps) {
    steps.forEach((step, i) => { this.known[offset + i] = step; });
  }

  page(number) {
    if (!this.pages.has(number)) {
      const offset = number * PAGE_SIZE;
      const url = `/api/artifact?id=${encodeURIComponent(this.id)}&offset=${offset}&limit=${PAGE_SIZE}`;
      this.pages.set(number, this.getJSON(url).then((view) => this.add(view.steps_offset, view.steps)));
    }
    return this.pages.get(number);
  }

  async at(index) {
    if (!this.known[index]) await this.page(Math.floor(index / PAGE_SIZE));
    return this.known[index];
  }
}

export class Timeline {
  // `nav` scrolls, `list` holds the rows; `row(step, index)` makes a step's row.
  constructor(nav, list, steps, row) {
    this.nav = nav;
    this.list = list;
    this.steps = steps;
    this.row = row;
    this.current = -1;
    this.shown = new Map();
    list.style.height = `${steps.count * ROW_HEIGHT}px`;
    let queued = false;
    nav.addEventListener("scroll", () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => { queued = false; this.render(); });
    }, { passive: true });
  }

  // Put the rows near the view in the page (and only those), fetching their steps.
  render() {
    const top = this.nav.scrollTop - this.list.offsetTop;
    const height = this.nav.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.steps.count - 1, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    for (const [index, item] of this.shown) {
      if (index < first || index > last || (item.dataset.pending && this.steps.known[index])) {
        item.remove();
        this.shown.delete(index);
      }
    }
    const missing = new Set();
    for (let index = first; index <= last; index += 1) {
      if (this.shown.has(index)) continue;
      const step = this.steps.known[index];
      const item = step ? this.row(step, index, this.steps.known[index - 1]) : this.placeholder(index);
      if (!step) missing.add(Math.floor(index / PAGE_SIZE));
      item.style.top = `${index * ROW_HEIGHT}px`;
      if (index === this.current) item.querySelector(".step")?.setAttribute("aria-current", "step");
      this.shown.set(index, item);
      this.list.append(item);
    }
    for (const number of missing) this.steps.page(number).then(() => this.render());
  }

  placeholder(index) {
    const item = document.createElement("li");
    item.dataset.pending = "true";
    const span = document.createElement("span");
    span.className = "step pending";
    span.textContent = `${index} …`;
    item.append(span);
    return item;
  }

  // Mark step `index` as the current one and scroll it into the view.
  show(index, { centre = false } = {}) {
    this.current = index;
    for (const current of this.list.querySelectorAll(".step[aria-current]")) current.removeAttribute("aria-current");
    const top = index * ROW_HEIGHT + this.list.offsetTop;
    const view = this.nav.clientHeight;
    if (centre) {
      this.nav.scrollTop = top - view / 2 + ROW_HEIGHT / 2;
    } else if (top < this.nav.scrollTop) {
      this.nav.scrollTop = top;
    } else if (top + ROW_HEIGHT > this.nav.scrollTop + view) {
      this.nav.scrollTop = top + ROW_HEIGHT - view;
    }
    this.render();
    this.shown.get(index)?.querySelector(".step")?.setAttribute("aria-current", "step");
  }
}
