# One image for every service (the compose file picks the entry point).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs libs
COPY services services
COPY schemas schemas
RUN npm ci --omit=dev --ignore-scripts=false || npm ci
ENV NODE_ENV=production
